"""`kernelmill verify` (verdicts for a samples file, resumable) and `kernelmill serve`."""

from __future__ import annotations

from pathlib import Path

import typer

from ..report.output import print_metrics
from ..verify import default_cache_dir
from ..verify import HarnessError
from ..verify import StoreError
from ..verify import VerifyConfig
from .common import PASS_AT_K, PASS_AT_K_HELP, load_samples_or_exit, load_tasks_or_exit
from .console import err, fail
from .options import with_verify_options
from .runs import dry_run_summary, run_verify, select_samples


@with_verify_options()
def verify_command(
    source: str = typer.Argument(..., help="Tasks: a KernelBench folder, a .jsonl/.parquet table, or 'builtin'."),
    samples_path: Path = typer.Argument(..., metavar="SAMPLES.jsonl", help="Samples: sample_id, task_id, language, code."),
    out: Path = typer.Option(..., "-o", "--out", help="Verdicts JSONL; appended to, so a re-run resumes."),
    store: Path = typer.Option(None, help="SQLite result store (default: the cache dir's verdicts.sqlite)."),
    k: str = typer.Option(PASS_AT_K, help=PASS_AT_K_HELP),
    only_tasks: str = typer.Option(None, "--tasks", help="Only samples of these task ids (comma-separated; "
                                                          "'level1/' takes a whole level)."),
    languages: str = typer.Option(None, "--languages", help="Only samples in these languages (comma-separated)."),
    limit: int = typer.Option(0, "--limit", help="Only the first N samples (after --tasks/--languages; 0: all)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Say what would be verified, and which samples "
                                                          "cannot run on this device, then stop."),
    rerun: bool = typer.Option(False, "--rerun", help="Verify the selected samples again even where OUT or the "
                                                      "store has their verdict (the new verdicts replace those in OUT). "
                                                      "Without it a verdict is reused only for the same code, task "
                                                      "and settings."),
    verify_config: VerifyConfig = None,
) -> None:
    """Build, run, check and time every sample in isolated processes; write verdicts.

    Each verdict carries its speedup with a 95% interval and how it was measured
    (docs/SEMANTICS.md states the rules: reference semantics and timing convention).
    The verification options are VerifyConfig's settings (a recipe's `verify` section)."""
    config = verify_config
    samples = select_samples(load_samples_or_exit(samples_path), only_tasks, languages, limit)
    if dry_run:
        dry_run_summary(source, samples, out, config)
        return
    verdicts = run_verify(source, samples, out, config, store or default_cache_dir() / "verdicts.sqlite",
                          rerun=rerun)
    print_metrics(verdicts, ks=[int(x) for x in k.split(",") if x.strip()])
    err.print(f"verdicts: {out}")


@with_verify_options()
def serve_command(
    source: str = typer.Option(None, "--tasks", help="Task source for samples that name a task_id only (folder, table, 'builtin')."),
    host: str = typer.Option("127.0.0.1", help="Address to listen on (0.0.0.0 for other machines: set --token)."),
    port: int = typer.Option(8765, help="TCP port."),
    store: Path = typer.Option(None, help="SQLite result store (default: the cache dir's verdicts.sqlite)."),
    concurrency: int = typer.Option(1, help="Verification requests run at once (each uses every core and GPU)."),
    queue_limit: int = typer.Option(64, help="Requests waiting for a slot before the service answers 503."),
    max_body_mb: float = typer.Option(16.0, help="Largest request body in MiB (413 above)."),
    max_samples: int = typer.Option(4096, help="Most samples in one request (413 above)."),
    token: str = typer.Option(None, envvar="KERNELMILL_SERVE_TOKEN", help="Shared token clients send as 'Authorization: Bearer TOKEN'."),
    verify_config: VerifyConfig = None,
) -> None:
    """Serve verification over HTTP: POST /verify {tasks, samples} -> {verdicts}; GET /health."""
    from ..verify import ServiceConfig, VerifyService, make_server

    config = verify_config
    tasks = {}
    if source:
        tasks = load_tasks_or_exit(source).by_id()
    if host not in ("127.0.0.1", "localhost", "::1") and not token:
        err.print("[yellow]warning:[/yellow] listening beyond this machine without --token: anyone who can reach "
                  "the port can run code here")
    svc_config = ServiceConfig(host=host, port=port, max_body_bytes=int(max_body_mb * 2**20),
                               max_samples=max_samples, concurrency=concurrency, queue_limit=queue_limit,
                               token=token)
    try:
        service = VerifyService(config, svc_config, store=str(store or default_cache_dir() / "verdicts.sqlite"),
                                tasks=tasks)
        server = make_server(service)
    except (HarnessError, StoreError, RuntimeError, OSError) as exc:
        fail(f"{exc}", 1)
    err.print(f"kernelmill serve: http://{host}:{server.server_address[1]}  device {service.verifier.device_name}, "
              f"{len(tasks)} tasks, token {'required' if token else 'off'}")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        err.print("stopped")
    finally:
        server.server_close()
        service.close()


def prepare_builds_command(
    samples_path: Path = typer.Argument(None, metavar="[SAMPLES.jsonl]",
                                        help="Samples whose load_inline flag sets to prepare (default: the flags "
                                             "torch's load_inline uses when a candidate passes none)."),
    cuda: bool = typer.Option(None, "--cuda/--no-cuda", help="Prepare the CUDA flag sets too (default: when the "
                              "NVIDIA driver lists a GPU)."),
) -> None:
    """Build the precompiled torch headers that verification runs compile candidates with,
    and (with SAMPLES) the binding objects of their extensions' signature lists.

    Once per machine and torch version, into the cache (KERNELMILL_CACHE).
    A run builds them too, in the background, for its later batches;
    a machine prepared first has them from its first batch (14 cold
    LLM-style candidates on an H200: 26.5 s against 39.6 s). A binding
    object (verify/build/slim_units.py) serves every candidate binding the same
    types: a cold CUDA build that finds it takes ~3 s on an H200. Keyed by
    TORCH_CUDA_ARCH_LIST (yours if set, else the GPUs'), as a run's builds are."""
    import json
    import time

    from ..verify import build_prepare
    from ..verify import driver_lists_gpus

    if cuda is None:
        cuda = driver_lists_gpus()
    bindings = []
    if samples_path is not None:
        from ..languages import get_language

        # every sample that builds an extension, whatever its label (a `torch` one may load_inline)
        codes = [s.code for s in load_samples_or_exit(samples_path)
                 if get_language(s.language).builds_extension(s.code)]
        specs = [s for s in build_prepare.run_specs(codes, min_uses=1) if cuda or not s[0]]
        bindings = [b for code in codes for b in build_prepare.binding_specs(code) if cuda or not b[0][0]]
    else:
        specs = [(False, (), ())] + ([(True, (), ())] if cuda else [])
    if not specs:
        err.print("nothing to prepare: no load_inline flag set in these samples")
        return
    if any(s[0] for s in specs):
        build_prepare.builds_arch_env()
    root = default_cache_dir() / "build"
    err.print(f"building the precompiled headers of {len(specs)} flag set(s) into {root} (~30-40 s each, in parallel)")
    t0 = time.perf_counter()
    report = build_prepare.prepare_pch(root, specs)
    if "error" in report:
        fail(f"a header did not build: {report['error']}", 1)
    ready = sum(1 for s in report["sets"] if s["ready"])
    err.print(f"{ready} of {len(report['sets'])} header(s) ready in {time.perf_counter() - t0:.0f} s")
    if bindings:
        t0 = time.perf_counter()
        report["bindings"] = build_prepare.prepare_bindings(root, bindings)
        b = report["bindings"]
        err.print(f"binding objects: {b['built']} built, {b['cached']} already there, {b['failed']} failed "
                  f"in {time.perf_counter() - t0:.0f} s" + (f"; first error:\n{b['error']}" if "error" in b else ""))
    print(json.dumps(report))

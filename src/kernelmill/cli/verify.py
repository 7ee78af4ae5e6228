"""`kernelmill verify` (verdicts for a samples file, resumable) and `kernelmill serve`."""

from __future__ import annotations

from pathlib import Path

import typer

from ..report.output import print_metrics
from ..verify import default_cache_dir
from ..verify import HarnessError
from ..verify import StoreError
from .common import PASS_AT_K, PASS_AT_K_HELP, err, fail, load_samples_or_exit, load_tasks_or_exit
from .runs import config_from_options, dry_run_summary, run_verify, select_samples


def verify_command(
    source: str = typer.Argument(..., help="Tasks: a KernelBench folder, a .jsonl/.parquet table, or 'builtin'."),
    samples_path: Path = typer.Argument(..., metavar="SAMPLES.jsonl", help="Samples: sample_id, task_id, language, code."),
    out: Path = typer.Option(..., "-o", "--out", help="Verdicts JSONL; appended to, so a re-run resumes."),
    device: str = typer.Option("auto", help="cpu, cuda, or auto (cuda when a GPU is visible)."),
    trials: int = typer.Option(5, help="Correctness trials, each with fresh random inputs."),
    build_timeout: float = typer.Option(600.0, help="Seconds allowed to import/compile one candidate."),
    run_timeout: float = typer.Option(None, help="Seconds allowed to check and time one candidate "
                                                 "(default: 60 on a CPU, 300 on a GPU)."),
    workers: int = typer.Option(0, help="Parallel build processes (0: one per CPU core)."),
    build_nice: int = typer.Option(10, help="Lower CPU priority of build processes and their compilers "
                                            "(a nice increment, 0-19; 0: none), so runs, whose host work "
                                            "the GPU waits for, get a core first."),
    profile: str = typer.Option("auto", help="Task size profile: auto (small on CPU, full on GPU), small, full."),
    store: Path = typer.Option(None, help="SQLite result store (default: the cache dir's verdicts.sqlite)."),
    k: str = typer.Option(PASS_AT_K, help=PASS_AT_K_HELP),
    executor: str = typer.Option("local", help="local (this machine) or ray (a Ray cluster)."),
    address: str = typer.Option(None, help="Ray cluster address for --executor ray (e.g. ray://head:10001 or auto)."),
    fast_build: bool = typer.Option(True, help="Build load_inline extensions with the cached fast builder."),
    standby_on_demand: bool = typer.Option(True, help="Start spare run processes only as the queued runs need them, "
                                                      "not --standby at once (spares warming up take the cores "
                                                      "from the first candidates' builds)."),
    spare_lead: float = typer.Option(15.0, help="With --standby-on-demand: a build running longer than this many "
                                                "seconds gets its run's spare started, so it is warm when the "
                                                "build ends (0: spares only for queued runs)."),
    fork_workers: bool = typer.Option(True, help="Fork spare build and run processes from one process that imported "
                                                 "torch once, instead of starting each fresh (each fresh one "
                                                 "imports torch: seconds of a core, per candidate)."),
    merge_units: bool = typer.Option(True, help="Let the fast builder compile a split CUDA extension's binding and "
                                                "host code as one unit where that provably keeps the meaning (half "
                                                "the CPU of a cold build; docs/ARCHITECTURE.md)."),
    slim_units: bool = typer.Option(True, help="Let the fast builder compile an extension's own C++ code (a CUDA "
                                               "extension's host code) against torch/types.h and reuse one pybind11 "
                                               "binding object per signature list (a cold CUDA build in ~3 s instead "
                                               "of ~12 s on an H200; verify/build/slim_units.py)."),
    guards: str = typer.Option("standard", help="Reward-hacking guards: off, standard or strict (docs/guards.md)."),
    fallback: str = typer.Option("reject", help="Candidates that fall back to PyTorch: reject, flag or allow."),
    build_standby: int = typer.Option(-1, help="Build processes started ahead (torch and the builder imported), so a "
                                               "candidate whose extension is cached waits for no start-up: -1 auto (4 "
                                               "on CUDA, none on CPU), 0 off."),
    standby: int = typer.Option(-1, help="Run processes started ahead per GPU, so their start-up overlaps earlier "
                                         "candidates (each still runs one candidate), where runs are not resident "
                                         "(--resident off, or --guards off): -1 auto (6 per run sharing a GPU, none "
                                         "on CPU), 0 off (also no resident supervisors)."),
    cpu_runners: int = typer.Option(1, help="Candidates run at once on a CPU device (timings then share the cores); "
                                            "on CUDA see --runs-per-gpu."),
    runs_per_gpu: int = typer.Option(0, help="Candidates run at once on one GPU: their start-up, inputs, reference "
                                             "runs and checks overlap, their timed rounds never do (a timing lock). "
                                             "0: auto (2: 1.24x the candidates per minute of 1 on an H200, docs/benchmarks.md)."),
    cpu_threads: int = typer.Option(1, help="Intra-op threads of both the reference's and the candidate's process "
                                            "when timing on a CPU (docs/SEMANTICS.md): the same on both sides."),
    numerics: str = typer.Option("pytorch", help="Numerics of the timed calls on a GPU: pytorch (PyTorch's defaults, "
                                                 "as KernelBench times: cuDNN may use TF32) or strict (TF32 off, as "
                                                 "the correctness trials always run). docs/SEMANTICS.md."),
    kernel_time: bool = typer.Option(True, help="Time GPU calls by the device's activity records (the GPU time of "
                                                "the work each call launched, every stream); off: CUDA events "
                                                "around each call, which also count the host's launch gaps."),
    compile_baseline: bool = typer.Option(False, "--compile-baseline", help=(
        "Also time each task's reference under torch.compile (once per task, compile time left out and "
        "recorded) and give every correct candidate its speedup over it too (speedup_compiled; "
        "docs/SEMANTICS.md). Off by default: a compile per task can cost more than the run's candidates.")),
    compile_mode: str = typer.Option("default", help="torch.compile mode for --compile-baseline: default, "
                                                     "reduce-overhead, max-autotune, max-autotune-no-cudagraphs."),
    compile_backend: str = typer.Option("inductor", help="torch.compile backend for --compile-baseline."),
    exchange: str = typer.Option("auto", help="How a guarded GPU run passes tensors to the candidate's process "
                                              "and back: auto (CUDA IPC, no host copies, when the input sets "
                                              "fit in a quarter of the free GPU memory; else files) or file "
                                              "(always through /dev/shm). CPU runs always use files."),
    resident: str = typer.Option("auto", help="Supervise guarded runs with a process that stays for job after job "
                                              "(its CUDA context opened once; each candidate still gets a fresh "
                                              "process; 61-70 candidates/min on an H200 against 52-60): auto (with guards "
                                              "on, unless --standby 0), on, off (a new supervisor per candidate)."),
    gpus: str = typer.Option(None, help="GPUs that run candidates, as indices of the visible GPUs (after "
                                        "CUDA_VISIBLE_DEVICES), comma-separated, e.g. 1 or 0,1; default all."),
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
) -> None:
    """Build, run, check and time every sample in isolated processes; write verdicts.

    Each verdict carries its speedup with a 95% interval and how it was measured
    (docs/SEMANTICS.md states the rules: reference semantics and timing convention)."""
    config = config_from_options(device, trials, build_timeout, run_timeout, workers, profile,
                                 executor, address, fast_build, guards=guards, fallback=fallback, standby=standby,
                                 cpu_runners=cpu_runners, cpu_threads=cpu_threads, runs_per_gpu=runs_per_gpu,
                                 compile_baseline=compile_baseline, compile_mode=compile_mode,
                                 compile_backend=compile_backend, exchange=exchange, gpus=gpus,
                                 build_nice=build_nice, build_standby=build_standby, merge_units=merge_units,
                                 slim_units=slim_units, standby_on_demand=standby_on_demand, fork_workers=fork_workers,
                                 spare_lead=spare_lead, resident=resident, numerics=numerics,
                                 kernel_time=kernel_time)
    samples = select_samples(load_samples_or_exit(samples_path), only_tasks, languages, limit)
    if dry_run:
        dry_run_summary(source, samples, out, config)
        return
    verdicts = run_verify(source, samples, out, config, store or default_cache_dir() / "verdicts.sqlite",
                          rerun=rerun)
    print_metrics(verdicts, ks=[int(x) for x in k.split(",") if x.strip()])
    err.print(f"verdicts: {out}")


def serve_command(
    source: str = typer.Option(None, "--tasks", help="Task source for samples that name a task_id only (folder, table, 'builtin')."),
    host: str = typer.Option("127.0.0.1", help="Address to listen on (0.0.0.0 for other machines: set --token)."),
    port: int = typer.Option(8765, help="TCP port."),
    device: str = typer.Option("auto", help="cpu, cuda, or auto."),
    trials: int = typer.Option(5, help="Correctness trials per candidate."),
    workers: int = typer.Option(0, help="Parallel build processes (0: one per CPU core)."),
    store: Path = typer.Option(None, help="SQLite result store (default: the cache dir's verdicts.sqlite)."),
    concurrency: int = typer.Option(1, help="Verification requests run at once (each uses every core and GPU)."),
    queue_limit: int = typer.Option(64, help="Requests waiting for a slot before the service answers 503."),
    max_body_mb: float = typer.Option(16.0, help="Largest request body in MiB (413 above)."),
    max_samples: int = typer.Option(4096, help="Most samples in one request (413 above)."),
    token: str = typer.Option(None, envvar="KERNELMILL_SERVE_TOKEN", help="Shared token clients send as 'Authorization: Bearer TOKEN'."),
    executor: str = typer.Option("local", help="local or ray."),
    address: str = typer.Option(None, help="Ray cluster address for --executor ray."),
    resident: str = typer.Option("auto", help="Supervise guarded runs with a process that stays for job after job "
                                              "(its CUDA context opened once; each candidate still gets a fresh "
                                              "process; 61-70 candidates/min on an H200 against 52-60): auto (with guards "
                                              "on, unless --standby 0), on, off (a new supervisor per candidate)."),
    gpus: str = typer.Option(None, help="GPUs that run candidates, as indices of the visible GPUs (after "
                                        "CUDA_VISIBLE_DEVICES), comma-separated, e.g. 1 or 0,1; default all."),
) -> None:
    """Serve verification over HTTP: POST /verify {tasks, samples} -> {verdicts}; GET /health."""
    from ..verify import ServiceConfig, VerifyService, make_server

    config = config_from_options(device, trials, 600.0, 300.0, workers, "auto", executor, address, gpus=gpus,
                                 resident=resident)
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
        codes = [s.code for s in load_samples_or_exit(samples_path) if s.language in ("cuda", "cpp")]
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

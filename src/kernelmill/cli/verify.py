"""`kernelmill verify`: verdicts for a samples file, resumable."""

from __future__ import annotations

import signal
import sys
import warnings
from pathlib import Path

import typer
from rich.console import Console

from ..records import ReadProblem, Sample, Verdict, append_jsonl, iter_jsonl, read_jsonl
from ..tasks.cli import load_tasks_or_exit
from .config import ConfigError, VerifyConfig, default_cache_dir
from .runner import HarnessError, verify_samples
from .store import StoreError

err = Console(stderr=True)


def load_samples_or_exit(path: Path) -> list[Sample]:
    if not path.exists():
        err.print(f"[red]error:[/red] samples file not found: {path}")
        raise typer.Exit(2)
    problems: list[ReadProblem] = []
    samples = read_jsonl(path, Sample, problems)
    for p in problems:
        err.print(f"[yellow]skipped[/yellow] {p}")
    if not samples:
        what = f"none of its {len(problems)} lines is a sample" if problems else "it is empty"
        err.print(f"[red]error:[/red] no samples in {path}: {what} (a line is a JSON object with sample_id, "
                  "task_id, language and code)", soft_wrap=True)
        raise typer.Exit(2)
    return samples


def select_samples(samples: list[Sample], tasks: str | None, languages: str | None, limit: int) -> list[Sample]:
    """The samples of the given task ids (comma-separated, or prefixes ending in '/')
    and languages, the first `limit` of them (0: all); exits 2 when none is left."""
    def items(text: str | None) -> list[str]:
        return [x.strip() for x in (text or "").split(",") if x.strip()]

    wanted, langs = items(tasks), items(languages)
    out = [s for s in samples
           if (not wanted or any(s.task_id == w or (w.endswith("/") and s.task_id.startswith(w)) for w in wanted))
           and (not langs or s.language in langs)]
    if limit > 0:
        out = out[:limit]
    if not out:
        err.print(f"[red]error:[/red] no sample left after --tasks/--languages/--limit (of {len(samples)})")
        raise typer.Exit(2)
    return out


def _sigterm(signum, frame) -> None:
    raise KeyboardInterrupt  # stop like Ctrl-C (a background run ignores SIGINT)


def done_sample_ids(out: Path) -> set[str]:
    """Sample ids that already have a verdict in OUT (a truncated tail is cut)."""
    if not out.exists():
        return set()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        append_jsonl(out, [])  # heals a truncated last line
    for w in caught:
        err.print(f"[yellow]note:[/yellow] {w.message}")
    problems: list[ReadProblem] = []
    ids = {row["sample_id"] for row in iter_jsonl(out, problems) if "sample_id" in row}
    for p in problems:
        err.print(f"[yellow]skipped[/yellow] {p}")
    return ids


def run_verify(source: str, samples: list[Sample], out: Path, config: VerifyConfig,
               store: Path | None, progress: bool = True) -> list[Verdict]:
    """Load tasks, skip samples already in OUT, verify the rest appending to OUT.
    Returns all verdicts of OUT that belong to `samples`."""
    tasks = load_tasks_or_exit(source)
    done = done_sample_ids(out)
    todo = [s for s in samples if s.sample_id not in done]
    if done:
        err.print(f"{len(samples) - len(todo)} of {len(samples)} samples already have verdicts in {out}; "
                  f"verifying the other {len(todo)}")
    # on a terminal a live bar; elsewhere (a log, a pipe) one whole line per candidate
    live = progress and err.is_terminal
    done_count = [len(samples) - len(todo)]
    counts: dict[str, int] = {}

    def on_verdict(v: Verdict) -> None:
        append_jsonl(out, [v])
        done_count[0] += 1
        counts[v.status] = counts.get(v.status, 0) + 1
        counts["cached"] = counts.get("cached", 0) + int(v.cached)
        if progress and not live:
            speed = f" {v.speedup:.2f}x" if v.speedup is not None else ""
            flags = f" [{','.join(v.flags)}]" if v.flags else ""
            cached = " (cached)" if v.cached else ""
            print(f"verify {done_count[0]}/{len(samples)} {v.status}{speed}{flags} {v.sample_id}{cached}",
                  file=sys.stderr, flush=True)

    previous = signal.signal(signal.SIGTERM, _sigterm)
    try:
        verify_samples(tasks.by_id(), todo, config, store=store, progress=live, on_verdict=on_verdict)
    except KeyboardInterrupt:
        err.print(f"\n[yellow]interrupted[/yellow]: verdicts so far are in {out}; run the same command again to finish")
        raise typer.Exit(130)
    except (HarnessError, StoreError, RuntimeError) as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(1)
    finally:
        signal.signal(signal.SIGTERM, previous)
    if progress and not live and todo:
        summary = ", ".join(f"{s} {n}" for s, n in counts.items() if s != "cached")
        print(f"verify: {len(todo)} candidates verified: {summary}; cached {counts.get('cached', 0)}",
              file=sys.stderr, flush=True)
    wanted = {s.sample_id for s in samples}
    return [v for v in read_jsonl(out, Verdict, []) if v.sample_id in wanted]


def dry_run_summary(source: str, samples: list[Sample], out: Path, config: VerifyConfig) -> None:
    """What `verify` would do: samples per language, those already in OUT, and
    those that cannot run on this device (with the reason); nothing is run."""
    from collections import Counter

    from ..backends import get_backend

    tasks = load_tasks_or_exit(source).by_id()
    device = config.resolved_device()
    done = done_sample_ids(out)
    todo = [s for s in samples if s.sample_id not in done]
    unknown = sorted({s.task_id for s in todo if s.task_id not in tasks})
    why_not = Counter()
    for s in todo:
        backend = get_backend(s.language)
        reason = f"unknown language {s.language!r}" if backend is None else backend.unsupported(device)
        if reason:
            why_not[reason] += 1
    by_lang = ", ".join(f"{lang} {n}" for lang, n in sorted(Counter(s.language for s in todo).items()))
    print(f"dry run on {device}: {len(todo)} of {len(samples)} samples to verify ({by_lang or 'none'}); "
          f"{len(samples) - len(todo)} already in {out}")
    for reason, n in sorted(why_not.items()):
        print(f"  {n} not run: {reason}")
    if unknown:
        print(f"  {sum(s.task_id in unknown for s in todo)} name tasks not in {source}: {', '.join(unknown[:10])}")


def config_from_options(device: str, trials: int, build_timeout: float, run_timeout: float,
                        workers: int, profile: str = "auto", executor: str = "local",
                        address: str | None = None, fast_build: bool = True, guards: str = "standard",
                        fallback: str = "reject", standby: int = -1, cpu_runners: int = 1,
                        cpu_threads: int = 1) -> VerifyConfig:
    """The options as a `VerifyConfig`, validated by the config itself (one set
    of rules for the CLI, the service and the GRPO reward)."""
    options = dict(device=device, trials=trials, build_timeout=build_timeout, run_timeout=run_timeout,
                   workers=workers, profile=profile, executor=executor, address=address, fast_build=fast_build,
                   guards=guards, fallback=fallback, standby=standby, cpu_runners=cpu_runners,
                   timing={"cpu_threads": cpu_threads})
    try:
        config = VerifyConfig.from_dict(options, "options")
    except ConfigError as exc:
        err.print(f"[red]error:[/red] {exc} (see kernelmill verify --help)")
        raise typer.Exit(2)
    if cpu_runners > 1 and config.resolved_device() == "cpu":
        err.print(f"[yellow]warning:[/yellow] {cpu_runners} candidates run at once on the CPU: their timings "
                  "share the cores (fine for correctness; for speedups use --cpu-runners 1)")
    return config


def verify_command(
    source: str = typer.Argument(..., help="Tasks: a KernelBench folder, a .jsonl/.parquet table, or 'builtin'."),
    samples_path: Path = typer.Argument(..., metavar="SAMPLES.jsonl", help="Samples: sample_id, task_id, language, code."),
    out: Path = typer.Option(..., "-o", "--out", help="Verdicts JSONL; appended to, so a re-run resumes."),
    device: str = typer.Option("auto", help="cpu, cuda, or auto (cuda when a GPU is visible)."),
    trials: int = typer.Option(5, help="Correctness trials, each with fresh random inputs."),
    build_timeout: float = typer.Option(600.0, help="Seconds allowed to import/compile one candidate."),
    run_timeout: float = typer.Option(300.0, help="Seconds allowed to check and time one candidate."),
    workers: int = typer.Option(0, help="Parallel build processes (0: one per CPU core)."),
    profile: str = typer.Option("auto", help="Task size profile: auto (small on CPU, full on GPU), small, full."),
    store: Path = typer.Option(None, help="SQLite result store (default: the cache dir's verdicts.sqlite)."),
    k: str = typer.Option("1", help="pass@k values for the summary table."),
    executor: str = typer.Option("local", help="local (this machine) or ray (a Ray cluster)."),
    address: str = typer.Option(None, help="Ray cluster address for --executor ray (e.g. ray://head:10001 or auto)."),
    fast_build: bool = typer.Option(True, help="Build load_inline extensions with the cached fast builder."),
    guards: str = typer.Option("standard", help="Reward-hacking guards: off, standard or strict (docs/guards.md)."),
    fallback: str = typer.Option("reject", help="Candidates that fall back to PyTorch: reject, flag or allow."),
    standby: int = typer.Option(-1, help="Run processes started ahead per GPU, so their start-up overlaps earlier "
                                         "candidates (each still runs one candidate): -1 auto (2 per GPU, none on CPU), 0 off."),
    cpu_runners: int = typer.Option(1, help="Candidates run at once on a CPU device (timings then share the cores); "
                                            "on CUDA there is one per GPU."),
    cpu_threads: int = typer.Option(1, help="Intra-op threads of both the reference's and the candidate's process "
                                            "when timing on a CPU (docs/SEMANTICS.md): the same on both sides."),
    only_tasks: str = typer.Option(None, "--tasks", help="Only samples of these task ids (comma-separated; "
                                                          "'level1/' takes a whole level)."),
    languages: str = typer.Option(None, "--languages", help="Only samples in these languages (comma-separated)."),
    limit: int = typer.Option(0, "--limit", help="Only the first N samples (after --tasks/--languages; 0: all)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Say what would be verified, and which samples "
                                                          "cannot run on this device, then stop."),
) -> None:
    """Build, run, check and time every sample in isolated processes; write verdicts.

    Each verdict carries its speedup with a 95% interval and how it was measured
    (docs/SEMANTICS.md states the rules: reference semantics and timing convention)."""
    from ..report.cli import print_metrics

    config = config_from_options(device, trials, build_timeout, run_timeout, workers, profile,
                                 executor, address, fast_build, guards=guards, fallback=fallback, standby=standby,
                                 cpu_runners=cpu_runners, cpu_threads=cpu_threads)
    samples = select_samples(load_samples_or_exit(samples_path), only_tasks, languages, limit)
    if dry_run:
        dry_run_summary(source, samples, out, config)
        return
    verdicts = run_verify(source, samples, out, config, store or default_cache_dir() / "verdicts.sqlite")
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
) -> None:
    """Serve verification over HTTP: POST /verify {tasks, samples} -> {verdicts}; GET /health."""
    from .service import ServiceConfig, VerifyService, make_server

    config = config_from_options(device, trials, 600.0, 300.0, workers, "auto", executor, address)
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
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(1)
    err.print(f"kernelmill serve: http://{host}:{server.server_address[1]}  device {service.verifier.device_name}, "
              f"{len(tasks)} tasks, token {'required' if token else 'off'}")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        err.print("stopped")
    finally:
        server.server_close()
        service.close()

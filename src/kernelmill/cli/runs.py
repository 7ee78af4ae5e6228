"""The verify run shared by `verify` and `demo`: options to a `VerifyConfig`,
sample selection, resume from the verdicts file, progress lines, Ctrl-C and
SIGTERM, and the dry run. Every call here is the library's
(`kernelmill.verify`); what is here is how a command reports it."""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import warnings
from pathlib import Path

import typer

from ..records import ReadProblem, Sample, Verdict, append_jsonl, iter_jsonl, read_jsonl
from ..verify import ConfigError, VerifyConfig
from ..verify import HarnessError, sized_tasks, verify_samples
from ..verify import StoreError, input_key
from ..languages import run_device_of
from .common import load_tasks_or_exit
from .console import err, fail

# seconds to check and time one candidate when --run-timeout is not given: a CPU run of the
# small size profile takes seconds, so a hanging candidate should not hold a demo for minutes
DEFAULT_RUN_TIMEOUT = {"cpu": 60.0, "cuda": 300.0}


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
        fail(f"no sample left after --tasks/--languages/--limit (of {len(samples)})")
    return out


def _sigterm(signum, frame) -> None:
    raise KeyboardInterrupt  # stop like Ctrl-C (a background run ignores SIGINT)


def done_sample_ids(out: Path) -> dict[str, str]:
    """{sample id: its verdict's input_key} of the verdicts in OUT (a truncated tail is
    cut; a later line for an id wins)."""
    if not out.exists():
        return {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        append_jsonl(out, [])  # heals a truncated last line
    for w in caught:
        err.print(f"[yellow]note:[/yellow] {w.message}")
    problems: list[ReadProblem] = []
    ids = {row["sample_id"]: str(row.get("input_key") or "") for row in iter_jsonl(out, problems) if "sample_id" in row}
    for p in problems:
        err.print(f"[yellow]skipped[/yellow] {p}")
    return ids


def warn_unfit(tasks_by_id: dict, samples: list[Sample], config: VerifyConfig) -> list[str]:
    """Say, before any candidate runs, which tasks will not fit this machine at the run's
    size profile (tasks/scaling.py), with the numbers; returns the lines."""
    from ..tasks.scaling import fit_problem

    device = config.resolved_device()
    sized = sized_tasks(tasks_by_id, samples, config, device)
    lines = []
    for tid, profile, where in sorted({(s.task_id, config.resolved_profile(device, s.language),
                                        run_device_of(s.language, device))
                                       for s in samples if s.task_id in sized}):
        task = sized[tid]
        overrides = task.sizes.get(profile, {}) if profile != "full" else {}
        why = fit_problem(task, overrides, where, config.memory_limit_gb, config.run_timeout)
        if why:
            hint = "" if profile == "small" else "; --profile small scales it down"
            lines.append(f"task {tid} at the {profile} profile {why}: its candidates will fail{hint}")
    for line in lines:
        err.print(f"[yellow]warning:[/yellow] {line}", soft_wrap=True)
    return lines


class UnfitCheck:
    """`warn_unfit` beside the run instead of before it. Its meta-device trace of each
    reference costs what the reference's Python costs: 10.5 s for a bidirectional 6-layer GRU
    (cuda-l1's 3090-L3-42), which on issue 40's cold run held every candidate back (23.4 s of
    147 s before the first one started). A thread is enough: the run's own work is in other
    processes, the trace's torch modes are thread-local, and its lines are printed as soon as
    they are known; `finish` waits for them once the candidates are done (a Ctrl-C does not)."""

    def __init__(self, tasks_by_id: dict, samples: list[Sample], config: VerifyConfig):
        self.lines: list[str] | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(tasks_by_id, samples, config),
                                        name="kernelmill-unfit-check", daemon=True)
        self._thread.start()

    def _run(self, tasks_by_id: dict, samples: list[Sample], config: VerifyConfig) -> None:
        try:
            self.lines = warn_unfit(tasks_by_id, samples, config)
        except Exception as exc:  # noqa: BLE001 - an advisory check must not end the run
            self._error = exc

    def finish(self) -> list[str]:
        self._thread.join()
        if self._error is not None:
            err.print(f"[yellow]note:[/yellow] the tasks' size check failed: {type(self._error).__name__}: "
                      f"{self._error}", soft_wrap=True)
        return self.lines or []


def answered_ids(samples: list[Sample], out: Path, tasks_by_id: dict, config: VerifyConfig,
                 rerun: bool = False) -> tuple[set[str], set[str]]:
    """(ids OUT already answers, ids whose verdict in OUT is stale). A verdict answers its
    sample only while the code, the task and the settings are the same (its input_key);
    with `rerun` none does."""
    done = done_sample_ids(out)
    device = config.resolved_device()
    answer = config.answer_key(device)
    tasks_by_id = sized_tasks(tasks_by_id, samples, config, device) if done else tasks_by_id
    answered, stale = set(), set()
    for s in samples:
        if s.sample_id not in done:
            continue
        if not rerun and done[s.sample_id] == input_key(tasks_by_id.get(s.task_id), s, answer):
            answered.add(s.sample_id)
        else:
            stale.add(s.sample_id)
    return answered, stale


def _drop_rows(out: Path, stale: set[str]) -> None:
    """Rewrite OUT without the verdicts of `stale` sample ids (atomically: a crash
    leaves the old file or the new one)."""
    keep = [row for row in iter_jsonl(out, []) if row.get("sample_id") not in stale]
    tmp = out.with_name(out.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        for row in keep:
            fh.write(json.dumps(row) + "\n")
    os.replace(tmp, out)


def run_verify(source: str, samples: list[Sample], out: Path, config: VerifyConfig,
               store: Path | None, progress: bool = True, rerun: bool = False) -> list[Verdict]:
    """Load tasks, skip samples already in OUT, verify the rest appending to OUT.
    Returns all verdicts of OUT that belong to `samples`."""
    tasks = load_tasks_or_exit(source)
    by_id = tasks.by_id()
    answered, stale = answered_ids(samples, out, by_id, config, rerun)
    unfit = UnfitCheck(by_id, [s for s in samples if s.sample_id not in answered], config)
    if stale:
        _drop_rows(out, stale)
        why = "--rerun" if rerun else "their code, task or settings changed"
        err.print(f"{len(stale)} verdict(s) in {out} no longer answer their samples ({why}); verifying them again")
    todo = [s for s in samples if s.sample_id not in answered]
    if len(todo) < len(samples):
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
        build = (v.measurement or {}).get("build") or {}
        if build.get("compiled") and not build.get("pch_used"):  # torch's headers parsed from scratch
            counts["no_header"] = counts.get("no_header", 0) + 1
        if progress and not live:
            speed = f" {v.speedup:.2f}x" if v.speedup is not None else ""
            flags = f" [{','.join(v.flags)}]" if v.flags else ""
            cached = " (cached)" if v.cached else ""
            print(f"verify {done_count[0]}/{len(samples)} {v.status}{speed}{flags} {v.sample_id}{cached}",
                  file=sys.stderr, flush=True)

    stats: dict = {}
    previous = signal.signal(signal.SIGTERM, _sigterm)
    try:
        verify_samples(by_id, todo, config, store=store, progress=live, on_verdict=on_verdict, stats=stats,
                       rerun=rerun)
    except KeyboardInterrupt:
        err.print(f"\n[yellow]interrupted[/yellow]: verdicts so far are in {out}; run the same command again to finish")
        raise typer.Exit(130)
    except (HarnessError, StoreError, RuntimeError) as exc:
        fail(f"{exc}", 1)
    finally:
        signal.signal(signal.SIGTERM, previous)
    unfit.finish()
    if progress and todo:
        summary = ", ".join(f"{s} {n}" for s, n in counts.items() if s not in ("cached", "no_header"))
        print(f"verify: {len(todo)} candidates verified: {summary}; cached {counts.get('cached', 0)}; "
              f"{_walls(stats)}", file=sys.stderr, flush=True)
        if counts.get("no_header"):
            print(f"verify: {counts['no_header']} build(s) compiled torch's headers from scratch; "
                  "`kernelmill prepare-builds` once on this machine halves that (docs/results/benchmarks_history.md)",
                  file=sys.stderr, flush=True)
    wanted = {s.sample_id for s in samples}
    return [v for v in read_jsonl(out, Verdict, []) if v.sample_id in wanted]


def _since_process_start() -> float | None:
    """Seconds since this process started (Linux /proc), or None."""
    try:
        with open("/proc/self/stat") as fh:
            started = int(fh.read().rsplit(")", 1)[1].split()[19])  # field 22: starttime, in clock ticks
        with open("/proc/uptime") as fh:
            return float(fh.read().split()[0]) - started / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def _walls(stats: dict) -> str:
    """Where the command's wall went: its start-up (imports, tasks), the verifier's
    (GPU probe, zygotes), the candidates, the close."""
    total = _since_process_start()
    parts = [f"{label} {stats[k]:.1f} s" for label, k in (("verifier start-up", "startup_s"),
                                                           ("candidates", "batch_s"), ("close", "close_s"))
             if k in stats]
    if stats.get("spares_started"):
        parts.append(f"{stats['spares_started']} spare run workers started")
    if total is None:
        return ", ".join(parts)
    before = total - sum(stats.get(k, 0.0) for k in ("startup_s", "batch_s", "close_s"))
    return f"{total:.1f} s since the command started: imports and tasks {before:.1f} s, " + ", ".join(parts)


def dry_run_summary(source: str, samples: list[Sample], out: Path, config: VerifyConfig) -> None:
    """What `verify` would do: samples per language, those already in OUT, and
    those that cannot run on this device (with the reason); nothing is run."""
    from collections import Counter

    from ..languages import get_language

    tasks = load_tasks_or_exit(source).by_id()
    device = config.resolved_device()
    answered, _ = answered_ids(samples, out, tasks, config)
    todo = [s for s in samples if s.sample_id not in answered]
    warn_unfit(tasks, todo, config)
    unknown = sorted({s.task_id for s in todo if s.task_id not in tasks})
    why_not = Counter()
    for s in todo:
        backend = get_language(s.language)
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


def parse_gpus(text: str | None) -> list[int] | None:
    """`--gpus 0,1` as [0, 1]; None or "all" for every visible GPU."""
    if text is None or text.strip().lower() in ("", "all"):
        return None
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        fail(f"--gpus takes GPU indices separated by commas (e.g. 0,1) or 'all', not {text!r}")


def config_from_values(values: dict) -> VerifyConfig:
    """Settings by name (`cli/options.py`: "field" or "timing.field", the command line's
    forms: `gpus` as "0,1", `run_timeout` None for the device's default) as a
    `VerifyConfig`, validated by the config itself (one set of rules for the CLI, the
    service and the GRPO reward)."""
    data: dict = {}
    for name, value in values.items():
        if name.startswith("timing."):
            data.setdefault("timing", {})[name.split(".", 1)[1]] = value
        else:
            data[name] = value
    if "gpus" in data:
        data["gpus"] = parse_gpus(data["gpus"])
    if data.get("run_timeout", 0) is None:
        try:
            device = VerifyConfig.from_dict({"device": data.get("device", "auto")}, "options").resolved_device()
        except ConfigError as exc:
            fail(f"{exc} (see --help)")
        data["run_timeout"] = DEFAULT_RUN_TIMEOUT[device]
    try:
        config = VerifyConfig.from_dict(data, "options")
    except ConfigError as exc:
        fail(f"{exc} (see --help)")
    if config.cpu_runners > 1 and config.resolved_device() == "cpu":
        err.print(f"[yellow]warning:[/yellow] {config.cpu_runners} candidates run at once on the CPU: their timings "
                  "share the cores (fine for correctness; for speedups use --cpu-runners 1)")
    return config


def config_from_options(device: str, trials: int, build_timeout: float, run_timeout: float | None,
                        workers: int, **settings) -> VerifyConfig:
    """`config_from_values` for callers that name a few settings (the demo, tests):
    the first five, then any "field" by name (the timing settings a command line may set,
    `cpu_threads`, `numerics`, `kernel_time`, `round_ms`, `deferred_records`, `kb_budget_ms`, go into the
    timing settings)."""
    from .options import ALL

    values = dict(device=device, trials=trials, build_timeout=build_timeout, run_timeout=run_timeout,
                  workers=workers)
    for name, value in settings.items():
        values["timing." + name if "timing." + name in ALL else name] = value
    return config_from_values(values)



"""End-to-end verification throughput on >= 100 distinct CUDA candidates.

The builtin suite's CUDA candidates (all but the compile error) are replicated
with a macro added to their CUDA source, so every replica is a new kernel unit
and a new host unit (a cold build) while the torch binding is shared, as
with many generations for the same task. Reports candidates per minute, builds
per second and the share of time the GPUs sat idle waiting for builds
(1 - gpu_busy_share, measured from the first run's start to the last run's end).

    python benchmarks/verify_throughput.py --copies 10 --out verify_throughput.json
    python benchmarks/verify_throughput.py --copies 10 --no-fast-build   # torch's load_inline
    CUDA_VISIBLE_DEVICES=0 python benchmarks/verify_throughput.py ...   # one GPU of several
    python benchmarks/verify_throughput.py --device cpu --language cpp --copies 3   # CPU machine
    OMP_NUM_THREADS=1 python benchmarks/verify_throughput.py --device cpu --language torch --cpu-runners 2
                                           # scaling with run workers on CPU cores (no GPUs)

Scaling from one GPU to several (issue 18), one invocation on one machine:

    python benchmarks/verify_throughput.py --language cuda,triton,torch --copies 1 --scaling 1,2 \
        --out verify_scaling.json

`--scaling 1,2` first runs a warm-up pass (the CUDA and Triton candidates once, on every GPU
asked for) so that the precompiled torch header and Triton's kernel cache exist before anything
is measured, as on any machine that has verified before; then the same corpus (same candidates,
same trials; new replica marks, so every CUDA unit is still a cold build) on GPU 0 alone, then on
GPUs 0 and 1 (`VerifyConfig.gpus`), all in one shared cache folder. Each pass reports candidates
per minute, the GPU busy share overall and per GPU, and the verdicts, which must be the same on
both sides; the last line is the ratio of candidates per minute.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from kernelmill.records import Sample  # noqa: E402
from kernelmill.tasks import load_tasks  # noqa: E402
from kernelmill.tasks.builtin import builtin_samples  # noqa: E402
from kernelmill.verify import VerifyConfig, verify_samples  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks" / "diag"))
import lock_events  # noqa: E402 - benchmarks/diag/lock_events.py
from smi_busy import SmiSampler, busy_mean  # noqa: E402 - benchmarks/diag/smi_busy.py


def replicas(language: str, copies: int, tag: str) -> list[Sample]:
    # compile errors build and stop; timeouts would only measure the run timeout
    base = [s for s in builtin_samples()
            if s.language == language and s.meta.get("expect") not in ("compile_error", "timeout")]
    out = []
    for i in range(copies):
        for s in base:
            if language in ("cuda", "cpp"):
                # a macro at the top of the first raw string (the C++/CUDA source): the
                # split keeps macros in both the kernel and the host unit (it drops
                # comments, so a comment made every replica a cache hit): both are new
                code, n = re.subn(r'r"""', f'r"""\n#define KM_REPLICA_{tag}_{i} 1\n', s.code, count=1)
                if n != 1:
                    continue
            else:  # torch, Triton: nothing to build; a new source text is a new candidate
                code = f"# replica {tag}-{i}\n{s.code}"
            out.append(Sample(sample_id=f"{s.sample_id}#{tag}-{i}", task_id=s.task_id, language=language,
                              code=code, meta={"expect": s.meta.get("expect")}))
    return out


PHASES = ("run_wall_s", "run_head_s", "sup_setup_s", "gpu_share_wait_s", "spare_wait_s", "build_s", "inputs_s",
          "check_s", "profile_s", "time_s", "timing_lock_wait_s", "guard_inputs_s", "ref_overlap_s",
          "guard_exchange_s", "xchg_setup_s", "xchg_ready_s", "xchg_end_s", "xchg_outputs_s", "xchg_exit_s",
          "guard_profile_s", "guard_judge_s", "sup_close_s", "run_tail_s", "cand_warm_wait_s")


def _median(xs: list[float]) -> float | None:
    xs = sorted(xs)
    return round(xs[len(xs) // 2], 3) if xs else None


def _start_lock_samplers(gpus: list[int] | None) -> list[tuple[str, subprocess.Popen, str, "SmiSampler"]]:
    """Per GPU: the lock sampler (diag/gpu_lock_share.py), where it writes, nvidia-smi's sampler
    and the lock's events file (diag/lock_events.py)."""
    from kernelmill.verify.devices import physical_gpu
    from kernelmill.verify.measure.gpulock import lock_path

    out = []
    for gpu in gpus or [0]:
        fd, path = tempfile.mkstemp(prefix=f"lock-share-{gpu}-", suffix=".json")
        os.close(fd)
        # a runner's run worker sees its one GPU as "cuda" under CUDA_VISIBLE_DEVICES=<that GPU> (runner._visible)
        proc = subprocess.Popen([sys.executable, str(ROOT / "benchmarks" / "diag" / "gpu_lock_share.py"),
                                 "--device", "cuda", "--visible", physical_gpu(gpu), "--every-ms", "10",
                                 "--samples", "--out", path],
                                stdout=subprocess.DEVNULL)
        # and whose holds they were: the harness's own log of them (diag/lock_events.py)
        events = lock_events.start(lock_path("cuda", {**os.environ, "CUDA_VISIBLE_DEVICES": physical_gpu(gpu)}))
        out.append((str(gpu), proc, path, SmiSampler(gpu), events))
    return out


def _stop_lock_samplers(samplers) -> dict[str, dict]:
    rows = {}
    for gpu, proc, path, smi, events in samplers:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
        try:
            lock = json.loads(Path(path).read_text()).get("samples", [])
        except (OSError, ValueError):
            lock = []
        Path(path).unlink(missing_ok=True)
        rows[gpu] = {"lock": lock, "smi": smi.stop(), "holds": lock_events.read(events, stop=True)}
    return rows


def _lock_shares(rows: dict, start: float, end: float) -> dict:
    """Over [start, end] (time.monotonic): the share of lock samples with any holder and with
    a timing, and the mean of nvidia-smi's utilization.gpu (percent)."""
    inside = [(sh, ex) for t, sh, ex in rows["lock"] if start <= t <= end]
    out: dict = {"samples": len(inside)}
    if inside:
        out.update(any=round(sum(1 for sh, ex in inside if sh or ex) / len(inside), 3),
                   timing=round(sum(1 for _, ex in inside if ex) / len(inside), 3))
    smi = busy_mean(rows["smi"], start, end)
    if smi["smi_samples"]:
        out.update(smi)
    return out


def measure(samples: list[Sample], tasks: dict, args: argparse.Namespace, cache: str,
            gpus: list[int] | None, runs_per_gpu: int = 0, build_nice: int | None = None,
            resident: str | None = None) -> dict:
    """One verification pass over `samples`: throughput, busy shares, verdicts, speedups and
    the median of each run phase. On a CPU device `gpus` stands for that many CPU run
    workers (the CI stand-in for GPUs)."""
    cpu = args.device == "cpu"
    overrides = {"standby": args.standby, "standby_groups": args.standby_groups,  # every pass, warm-ups too
                 "merge_units": not args.no_merge_units,
                 "build_nice": args.build_nice if build_nice is None else build_nice,
                 "build_standby": args.build_standby, "resident": resident or args.resident}
    config = VerifyConfig(device=args.device, trials=args.trials, workers=args.workers, cache_dir=cache,
                          fast_build=not args.no_fast_build, executor=args.executor, address=args.address,
                          cpu_runners=len(gpus) if cpu and gpus else args.cpu_runners,
                          gpus=None if cpu else gpus, runs_per_gpu=runs_per_gpu, **overrides)
    stats: dict = {}
    samplers = _start_lock_samplers(gpus) if args.lock_share and not cpu else []
    t0 = time.monotonic()
    landed: list[float] = []

    def show(v) -> None:  # one line per verdict as it lands: a run cut off by a time limit still reports
        landed.append(time.monotonic() - t0)
        print(f"{v.sample_id:55s} {v.status:14s} build_s={v.phases.get('build_s')} "
              f"run_wall_s={v.phases.get('run_wall_s')} t={landed[-1]:.1f}", flush=True)

    try:
        verdicts = verify_samples(tasks, samples, config, store=None, progress=False, stats=stats, on_verdict=show)
    finally:
        lock_samples = _stop_lock_samplers(samplers)
    wall = time.monotonic() - t0
    wrong = [(s.sample_id, s.meta["expect"], v.status) for s, v in zip(samples, verdicts) if v.status != s.meta["expect"]]
    result = {
        "gpus": gpus, "candidates": len(samples), "wall_s": round(wall, 1),
        "per_minute": round(60 * len(samples) / wall, 1),
        "gpu_busy_share": stats.get("gpu_busy_share"), "run_busy_share": stats.get("run_busy_share"),
        "busy_share_by_worker": stats.get("busy_share_by_worker"),
        "run_workers": stats.get("run_workers"), "builds_per_s": round(stats.get("builds_per_s", 0), 3),
        "median_build_s": sorted(v.phases.get("build_s", 0) for v in verdicts)[len(verdicts) // 2],
        "median_run_wall_s": sorted(v.phases.get("run_wall_s", 0) or 0 for v in verdicts)[len(verdicts) // 2],
        "split_builds": stats.get("split_builds"), "fallback_builds": stats.get("fallback_builds"),
        "merged_builds": stats.get("merged_builds"), "pch_builds": stats.get("pch_builds"),
        "run_compiles": stats.get("run_compiles"),
        "unexpected_verdicts": wrong[:20], "fast_build": not args.no_fast_build,
        "verdicts": {v.sample_id.split("#")[0]: v.status for v in verdicts}, "stats": stats,
        "speedups": {v.sample_id.split("#")[0]: v.speedup for v in verdicts if v.speedup},
        "per_verdict": [{"sample_id": v.sample_id, "status": v.status, "phases": v.phases,
                         "lock_holders": v.measurement.get("timing_lock_holders")} for v in verdicts],
        "runs_per_gpu": runs_per_gpu or config.resolved_runs_per_gpu(), "overrides": overrides,
        "phase_medians": {k: _median([v.phases[k] for v in verdicts if isinstance(v.phases.get(k), (int, float))])
                          for k in PHASES},
    }
    # once the pipeline is full: verdicts after the k-th to land, over the time since it
    # landed (the first ones wait for the first spares' warm-up and the first builds)
    k = max(5, len(landed) // 10)
    if len(landed) > k + 1 and landed[-1] > landed[k - 1]:
        result["steady"] = {"after_verdict": k, "first_at_s": round(landed[k - 1], 1),
                            "per_minute": round(60 * (len(landed) - k) / (landed[-1] - landed[k - 1]), 1)}
    if lock_samples:
        # the GPU lock's holders, sampled from /proc/locks by another process (diag/gpu_lock_share.py):
        # over the whole pass, and over the steady window the per-minute figure above uses
        window = (t0 + landed[k - 1], t0 + landed[-1]) if "steady" in result else (t0, t0 + wall)
        result["lock_share"] = {gpu: {"pass": _lock_shares(rows, t0, t0 + wall), "steady": _lock_shares(rows, *window)}
                                for gpu, rows in lock_samples.items()}
        # whose holds those were, from the harness's own log (diag/lock_events.py), same window
        result["lock_events"] = {gpu: lock_events.summarize(rows["holds"], *window)
                                 for gpu, rows in lock_samples.items() if rows["holds"]}
    result["landed_s"] = [round(t, 2) for t in landed]
    if result["gpu_busy_share"] is not None:
        result["gpu_idle_share"] = round(1 - result["gpu_busy_share"], 3)
    print(json.dumps({k: v for k, v in result.items() if k not in ("stats", "verdicts", "speedups", "per_verdict", "landed_s")}, indent=1),
          flush=True)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--copies", type=int, default=10)
    ap.add_argument("--language", default="cuda", help="one language or several, comma-separated (cuda,triton,torch)")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--cpu-runners", type=int, default=1, help="run workers on a CPU device (scaling without GPUs)")
    ap.add_argument("--gpus", default=None, help="GPUs that run candidates (indices, comma-separated; default all)")
    ap.add_argument("--scaling", default=None, metavar="N,M",
                    help="run the same corpus on the first N GPUs, then the first M (after a warm-up pass)")
    ap.add_argument("--runs-sweep", default=None, metavar="A,B",
                    help="run the same corpus with A, then B run workers per GPU (after a warm-up pass); "
                         "compares throughput, verdicts and each candidate's speedup")
    ap.add_argument("--nice-sweep", default=None, metavar="A,B",
                    help="run the same corpus with builds at nice increment A, then B (VerifyConfig.build_nice; "
                         "after a warm-up pass), compared as --runs-sweep compares")
    ap.add_argument("--resident", default="auto", choices=("auto", "on", "off"),
                    help="guarded runs supervised by processes that stay for job after job "
                         "(VerifyConfig.resident; verify/pools/resident.py) or a new one per candidate (off)")
    ap.add_argument("--resident-sweep", default=None, metavar="A,B",
                    help="run the same corpus with --resident A, then B (e.g. off,on,off,on; after a warm-up "
                         "pass), compared as --runs-sweep compares")
    ap.add_argument("--no-warmup", action="store_true",
                    help="skip the warm-up pass of --runs-sweep/--nice-sweep (the cache folder has seen these "
                         "builds before)")
    ap.add_argument("--build-standby", type=int, default=-1,
                    help="spare build workers (VerifyConfig.build_standby; -1 auto, 0 none)")
    ap.add_argument("--build-nice", type=int, default=10,
                    help="nice increment of build processes (VerifyConfig.build_nice; 0 = none)")
    ap.add_argument("--standby", type=int, default=-1, help="spares per GPU (VerifyConfig.standby; -1 auto)")
    ap.add_argument("--standby-groups", action="store_true",
                    help="start spares in groups when none is left (VerifyConfig.standby_groups)")
    ap.add_argument("--cache-dir", default=None, help="build cache folder (default: a new temporary one)")
    ap.add_argument("--no-fast-build", action="store_true")
    ap.add_argument("--no-merge-units", action="store_true",
                    help="never compile binding and host units as one (VerifyConfig.merge_units)")
    ap.add_argument("--executor", default="local")
    ap.add_argument("--address", default=None)
    ap.add_argument("--out", default="verify_throughput.json")
    ap.add_argument("--lock-share", action="store_true",
                    help="sample the GPU lock's holders from another process (diag/gpu_lock_share.py) during each "
                         "pass: the share of time some GPU work of ours, and a timing, was in flight")
    args = ap.parse_args()
    languages = [x.strip() for x in args.language.split(",") if x.strip()]
    tag = str(int(time.time()))  # new sources every invocation: nothing from a previous run is reused

    def corpus(label: str, langs: list[str] = languages, copies: int = args.copies) -> list[Sample]:
        return [s for lang in langs for s in replicas(lang, copies, f"{tag}{label}")]

    tasks = load_tasks("builtin").by_id()
    cache = args.cache_dir or tempfile.mkdtemp(prefix="km-throughput-")
    gpus = [int(x) for x in args.gpus.split(",")] if args.gpus else None
    if args.runs_sweep:
        return sweep_runs(args, corpus, tasks, cache, gpus or [0], languages,
                          [{"runs_per_gpu": int(x)} for x in args.runs_sweep.split(",")])
    if args.resident_sweep:
        return sweep_runs(args, corpus, tasks, cache, gpus or [0], languages,
                          [{"resident": x.strip()} for x in args.resident_sweep.split(",")])
    if args.nice_sweep:
        return sweep_runs(args, corpus, tasks, cache, gpus or [0], languages,
                          [{"build_nice": int(x)} for x in args.nice_sweep.split(",")])
    if not args.scaling:
        result = measure(corpus(""), tasks, args, cache, gpus)
        Path(args.out).write_text(json.dumps(result, indent=1))
        return

    counts = [int(x) for x in args.scaling.split(",")]
    out: dict = {"languages": languages, "copies": args.copies, "trials": args.trials, "cache_dir": cache, "runs": []}

    def save() -> None:  # after every pass, so a time limit keeps what was measured
        Path(args.out).write_text(json.dumps(out, indent=1))

    compiled = [lang for lang in languages if lang in ("cuda", "triton", "cpp")]
    if compiled:
        print(f"== warm-up: {', '.join(compiled)} once on GPUs 0..{max(counts) - 1}", flush=True)
        warm = measure(corpus("w", compiled, 1), tasks, args, cache, list(range(max(counts))))
        out["warmup"] = {k: warm[k] for k in ("candidates", "wall_s", "per_minute")}
        save()
    for n in counts:
        print(f"== {n} GPU(s)", flush=True)
        out["runs"].append(measure(corpus(f"g{n}"), tasks, args, cache, list(range(n))))
        save()
    base, last = out["runs"][0], out["runs"][-1]
    out["ratio"] = round(last["per_minute"] / base["per_minute"], 3) if base["per_minute"] else None
    out["same_verdicts"] = base["verdicts"] == last["verdicts"]
    save()
    print(f"\n{'GPUs':>5} {'cand.':>6} {'wall s':>7} {'per min':>8} {'busy':>6}  busy per GPU")
    for r in out["runs"]:
        busy = r["gpu_busy_share"] if r["gpu_busy_share"] is not None else r["run_busy_share"]
        per = " ".join(f"{k}:{v:.2f}" for k, v in (r["busy_share_by_worker"] or {}).items())
        print(f"{len(r['gpus']):>5} {r['candidates']:>6} {r['wall_s']:>7} {r['per_minute']:>8} "
              f"{(busy or 0):>6.2f}  {per}")
    print(f"ratio {out['ratio']}x, same verdicts: {out['same_verdicts']}")


def sweep_runs(args, corpus, tasks, cache: str, gpus: list[int], languages: list[str], settings: list[dict]) -> None:
    """The same corpus under each of `settings` in turn (1, 2, ... run workers per GPU;
    builds at one nice increment, then another): candidates per minute, and whether the
    verdicts and the speedups stay the same (with runs sharing a GPU the timing lock
    keeps timed regions alone; the rest overlaps)."""
    out: dict = {"languages": languages, "copies": args.copies, "trials": args.trials, "gpus": gpus, "runs": []}

    def save() -> None:
        Path(args.out).write_text(json.dumps(out, indent=1))

    compiled = [lang for lang in languages if lang in ("cuda", "triton", "cpp")]
    if compiled and not args.no_warmup:
        print(f"== warm-up: {', '.join(compiled)} once", flush=True)
        warm = measure(corpus("w", compiled, 1), tasks, args, cache, gpus)
        out["warmup"] = {k: warm[k] for k in ("candidates", "wall_s", "per_minute")}
        save()
    for i, setting in enumerate(settings):
        print(f"== {setting}", flush=True)
        out["runs"].append(measure(corpus(f"r{i}"), tasks, args, cache, gpus, **setting))
        save()
    base = out["runs"][0]
    for r in out["runs"][1:]:
        r["ratio"] = round(r["per_minute"] / base["per_minute"], 3) if base["per_minute"] else None
        r["same_verdicts"] = r["verdicts"] == base["verdicts"]
        common = [k for k in r["speedups"] if k in base["speedups"]]
        dev = sorted(abs(r["speedups"][k] / base["speedups"][k] - 1) for k in common)
        r["speedup_deviation"] = {"n": len(dev), "median": _median(dev), "max": round(max(dev), 3) if dev else None}
    save()
    print(f"\n{'runs/GPU':>8} {'nice':>4} {'resident':>8} {'cand.':>6} {'wall s':>7} {'per min':>8} {'steady':>7} {'ratio':>6} "
          f"{'verdicts':>9} {'speedup dev. median/max':>24}  run wall, lock wait (median s)")
    for r in out["runs"]:
        d = r.get("speedup_deviation") or {}
        pm = r["phase_medians"]
        print(f"{r['runs_per_gpu']:>8} {r['overrides']['build_nice']:>4} {r['overrides']['resident']:>8} {r['candidates']:>6} {r['wall_s']:>7} "
              f"{r['per_minute']:>8} {(r.get('steady') or {}).get('per_minute', '-'):>7} "
              f"{r.get('ratio', 1.0):>6} {str(r.get('same_verdicts', '-')):>9} "
              f"{str(d.get('median', '-')) + ' / ' + str(d.get('max', '-')):>24}  "
              f"{pm['run_wall_s']}, {pm['timing_lock_wait_s']}")
    for r in out["runs"]:
        if r.get("lock_share"):
            print(f"runs/GPU {r['runs_per_gpu']}: GPU lock and nvidia-smi, steady window: "
                  + "; ".join(f"GPU {g}: {v['steady']}" for g, v in r["lock_share"].items()))
        for g, e in (r.get("lock_events") or {}).items():  # whose holds the timings waited for (diag/lock_events.py)
            print(f"runs/GPU {r['runs_per_gpu']}, GPU {g}: {e.get('timings')} timings waited (s) "
                  + ", ".join(f"{k} {v}" for k, v in list(e.get("timing_waits_s", {}).items())[:6]))


if __name__ == "__main__":
    main()

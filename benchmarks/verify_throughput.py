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
"""

from __future__ import annotations

import argparse
import json
import re
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--copies", type=int, default=10)
    ap.add_argument("--language", default="cuda")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--cpu-runners", type=int, default=1, help="run workers on a CPU device (scaling without GPUs)")
    ap.add_argument("--no-fast-build", action="store_true")
    ap.add_argument("--executor", default="local")
    ap.add_argument("--address", default=None)
    ap.add_argument("--out", default="verify_throughput.json")
    args = ap.parse_args()
    tag = str(int(time.time()))  # new sources every invocation: nothing from a previous run is reused
    samples = replicas(args.language, args.copies, tag)
    tasks = load_tasks("builtin").by_id()
    cache = tempfile.mkdtemp(prefix="km-throughput-")
    config = VerifyConfig(device=args.device, trials=args.trials, workers=args.workers, cache_dir=cache,
                          fast_build=not args.no_fast_build, executor=args.executor, address=args.address,
                          cpu_runners=args.cpu_runners)
    stats: dict = {}
    t0 = time.monotonic()
    def show(v) -> None:  # one line per verdict as it lands: a run cut off by a time limit still reports
        print(f"{v.sample_id:55s} {v.status:14s} build_s={v.phases.get('build_s')} "
              f"run_wall_s={v.phases.get('run_wall_s')}", flush=True)

    verdicts = verify_samples(tasks, samples, config, store=None, progress=False, stats=stats, on_verdict=show)
    wall = time.monotonic() - t0
    wrong = [(s.sample_id, s.meta["expect"], v.status) for s, v in zip(samples, verdicts) if v.status != s.meta["expect"]]
    result = {
        "candidates": len(samples), "wall_s": round(wall, 1), "per_minute": round(60 * len(samples) / wall, 1),
        "gpu_busy_share": stats.get("gpu_busy_share"), "run_busy_share": stats.get("run_busy_share"),
        "run_workers": stats.get("run_workers"), "builds_per_s": round(stats.get("builds_per_s", 0), 3),
        "median_build_s": sorted(v.phases.get("build_s", 0) for v in verdicts)[len(verdicts) // 2],
        "split_builds": stats.get("split_builds"), "fallback_builds": stats.get("fallback_builds"),
        "unexpected_verdicts": wrong[:20], "fast_build": not args.no_fast_build, "stats": stats,
    }
    if result["gpu_busy_share"] is not None:
        result["gpu_idle_share"] = round(1 - result["gpu_busy_share"], 3)
    print(json.dumps({k: v for k, v in result.items() if k != "stats"}, indent=1))
    Path(args.out).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()

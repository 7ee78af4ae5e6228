"""Curation throughput on SYNTHETIC data (issue 6's figures).

1. Near-dup: N synthetic ~2 KB kernels with planted copies whose exact shingle
   Jaccard is measured; MinHash + LSH dedup at threshold 0.8 (global scope);
   wall time, and recall / precision against the planted pairs' exact Jaccard.
2. ConCuR: `concur` on synthetic Samples + Verdicts at ConCuR's scale
   (18,162 tasks x 5 = 90,810) and at 100,000 (20,000 x 5); seconds.

Run: python benchmarks/curate_throughput.py [--kernels 100000] [--workers 2] [--repeat 5]
Prints one JSON object; numbers go to docs/benchmarks.md by hand. The machine
may be shared: dedup is timed `--repeat` times (median reported) with its CPU
time (user + sys of this process and its worker processes, less sensitive to
other jobs than wall time) and the 1-minute load average around each run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import time

from kernelmill.curate import DedupConfig, concur, dedup, join
from kernelmill.curate.synthetic import synthetic_generations, synthetic_kernels


def _cpu_s() -> float:
    """user + sys of this process and its reaped children (dedup's workers)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def bench_dedup(n: int, workers: int, threshold: float, repeat: int = 1) -> dict:
    t0 = time.perf_counter()
    records, planted = synthetic_kernels(n, dup_share=0.2, seed=0)
    gen_s = time.perf_counter() - t0
    runs = []
    for _ in range(repeat):
        load0, c0, t0 = os.getloadavg()[0], _cpu_s(), time.perf_counter()
        res = dedup(records, DedupConfig(method="minhash", threshold=threshold, scope="global", workers=workers))
        wall, cpu = time.perf_counter() - t0, _cpu_s() - c0
        runs.append({"wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
                     "load_1m": [round(load0, 1), round(os.getloadavg()[0], 1)]})
    dropped = {e["id"] for e in res.excluded}
    planted_ids = {p.copy for p in planted}
    positives = [p for p in planted if p.jaccard >= threshold]
    tp = sum(1 for p in positives if p.copy in dropped)
    # a drop is false when the record is not a planted copy at or above the threshold
    true_ids = {p.copy for p in positives}
    fp = sum(1 for d in dropped if d not in true_ids)
    near = [p for p in planted if p.kind == "near"]
    return {
        "records": len(records), "mean_bytes": round(sum(len(r["code"]) for r in records) / len(records)),
        "planted": len(planted), "planted_exact": len(planted) - len(near),
        "planted_near_at_or_above_threshold": sum(1 for p in near if p.jaccard >= threshold),
        "planted_near_below_threshold": sum(1 for p in near if p.jaccard < threshold),
        "generate_s": round(gen_s, 1), "workers": workers,
        "dedup_wall_s_median": statistics.median(r["wall_s"] for r in runs),
        "dedup_cpu_s_median": statistics.median(r["cpu_s"] for r in runs), "runs": runs,
        "dropped": len(dropped), "counts": res.counts(),
        "recall": round(tp / len(positives), 4) if positives else None,
        "precision": round((len(dropped) - fp) / len(dropped), 4) if dropped else None,
        "false_drops_outside_planted": sum(1 for d in dropped if d not in planted_ids),
    }


def bench_concur(n_tasks: int) -> dict:
    samples, verdicts, types = synthetic_generations(n_tasks=n_tasks, per_task=5, seed=0)
    t0 = time.perf_counter()
    gens, _ = join(samples, verdicts)
    sel = concur(gens, types)
    wall = time.perf_counter() - t0
    return {"samples": len(samples), "concur_s (join + select)": round(wall, 2), "counts": sel.counts}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", type=int, default=100_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--threshold", type=float, default=0.8)
    ap.add_argument("--repeat", type=int, default=1, help="dedup runs to time (median reported)")
    ap.add_argument("--skip-concur", action="store_true", help="only the dedup figure")
    args = ap.parse_args()
    out = {"machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
           "dedup": bench_dedup(args.kernels, args.workers, args.threshold, args.repeat)}
    if not args.skip_concur:
        out["concur_90810"], out["concur_100000"] = bench_concur(18162), bench_concur(20000)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()

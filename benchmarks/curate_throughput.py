"""Curation throughput on SYNTHETIC data (issue 6's figures).

1. Near-dup: N synthetic ~2 KB kernels with planted copies whose exact shingle
   Jaccard is measured; MinHash + LSH dedup at threshold 0.8 (global scope);
   wall time, and recall / precision against the planted pairs' exact Jaccard.
2. ConCuR: `concur` on synthetic Samples + Verdicts at ConCuR's scale
   (18,162 tasks x 5 = 90,810) and at 100,000 (20,000 x 5); seconds.

Run: python benchmarks/curate_throughput.py [--kernels 100000] [--workers 2]
Prints one JSON object; numbers go to docs/benchmarks.md by hand.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

from kernelmill.curate import DedupConfig, concur, dedup, join
from kernelmill.curate.synthetic import synthetic_generations, synthetic_kernels


def bench_dedup(n: int, workers: int, threshold: float) -> dict:
    t0 = time.perf_counter()
    records, planted = synthetic_kernels(n, dup_share=0.2, seed=0)
    gen_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = dedup(records, DedupConfig(method="minhash", threshold=threshold, scope="global", workers=workers))
    wall = time.perf_counter() - t0
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
        "generate_s": round(gen_s, 1), "dedup_wall_s": round(wall, 2), "workers": workers,
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
    args = ap.parse_args()
    out = {"machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
           "concur_90810": bench_concur(18162), "concur_100000": bench_concur(20000),
           "dedup": bench_dedup(args.kernels, args.workers, args.threshold)}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()

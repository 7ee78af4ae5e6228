"""Throughput of `kernelmill ptx augment` for a fixed wall-clock budget (CPU only).

Runs the augmentation (every model family, both pipelines, 2 worker processes by
default) into OUT/pairs.jsonl until the budget ends, then near-deduplicates the
pairs (MinHash LSH over the CUDA side, exact Jaccard confirmation) and reports:
pairs, distinct pairs, families, pairs/s and distinct pairs/s over the budget, and
the extrapolation to one hour (rate x 3600 s; the first minutes include each
worker's start-up, so the extrapolation is slightly pessimistic). Writes
OUT/augment.json and two figures: OUT/augment_counts.png (pairs per family and
pipeline) and OUT/augment_lengths.png (PTX and Rolled-PTX token counts).
Resumes: a re-run with the same OUT and settings continues where it stopped
(the budget then counts only the new run; the report covers all pairs in OUT).

Needs apache-tvm 0.27 (pip install 'kernelmill[augment]') and nvcc.

    nice -n 10 python benchmarks/ptx_augment.py --out /tmp/aug --budget 600
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import Counter
from pathlib import Path

from kernelmill.ptx.augment.runner import AugmentConfig, augment, write_distinct
from kernelmill.records import iter_jsonl


def figures(rows: list[dict], out: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fams = sorted({r["meta"]["model_family"] for r in rows})
    fig, ax = plt.subplots(figsize=(8, 4))
    for k, pipe in enumerate(("schedule", "subgraph")):
        n = [sum(r["meta"]["model_family"] == f and r["meta"]["pipeline"] == pipe for r in rows) for f in fams]
        ax.bar([i + 0.4 * k for i in range(len(fams))], n, width=0.4, label=f"{pipe} pipeline")
    ax.set_xticks([i + 0.2 for i in range(len(fams))], fams, rotation=30)
    ax.set_ylabel("pairs")
    ax.set_title(f"ptx augment: {len(rows)} pairs per model family and pipeline")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "augment_counts.png", dpi=120)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(8, 4))
    plain = [r["meta"]["ptx_tokens"] for r in rows]
    rolled = [r["meta"].get("rolled_tokens", 0) for r in rows if r["meta"].get("rolled_tokens")]
    hi = max(plain + rolled + [1])
    bins = [2 ** (i / 4) for i in range(4 * 3, int(4 * (hi.bit_length() + 1)))]
    ax.hist(plain, bins=bins, alpha=0.6, label="PTX")
    ax.hist(rolled, bins=bins, alpha=0.6, label="Rolled-PTX")
    ax.set_xscale("log")
    ax.set_xlabel("tokens per kernel")
    ax.set_ylabel("pairs")
    ax.set_title("PTX length distribution of the augmented pairs")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "augment_lengths.png", dpi=120)
    plt.close(fig)


def quantiles(xs: list[int]) -> dict:
    xs = sorted(xs)
    if not xs:
        return {}
    return {q: xs[min(len(xs) - 1, int(len(xs) * p))] for q, p in (("p10", .1), ("p50", .5), ("p90", .9))} | {
        "max": xs[-1], "mean": round(sum(xs) / len(xs), 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True, help="Folder for pairs.jsonl, the figures and the JSON.")
    ap.add_argument("--budget", type=float, default=600, help="Wall-clock seconds of augmentation.")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--models", type=int, default=40, help="Instances per family (more than a budget uses).")
    ap.add_argument("--variants", type=int, default=8)
    ap.add_argument("--tiles", type=int, default=6)
    ap.add_argument("--no-reroll", action="store_true",
                    help="Store no Rolled-PTX (`ptx export --rolled` makes it later); about a fifth of the time.")
    ap.add_argument("--threshold", type=float, default=0.9, help="Near-duplicate Jaccard threshold.")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    pairs = a.out / "pairs.jsonl"
    cfg = AugmentConfig(models=a.models, variants=a.variants, tiles=a.tiles, workers=a.workers,
                        reroll=not a.no_reroll)
    t0 = time.monotonic()
    last = [t0]

    def on_job(job_id, rows, done, total):
        now = time.monotonic()
        if now - last[0] > 30:
            last[0] = now
            print(f"  {now - t0:6.0f}s  jobs {done}/{total}", flush=True)

    s = augment(pairs, cfg, deadline=t0 + a.budget, on_job=on_job)
    wall = time.monotonic() - t0
    rows = [r for r in iter_jsonl(pairs) if r.get("meta", {}).get("status") == "ok"]
    td = time.monotonic()
    counts = write_distinct(pairs, a.out / "distinct.jsonl", a.threshold, workers=a.workers)
    dedup_s = time.monotonic() - td
    distinct = counts["kept"]
    per = Counter((r["meta"]["model_family"], r["meta"]["pipeline"]) for r in rows)
    report = {
        "budget_s": a.budget, "wall_s": round(wall, 1), "dedup_s": round(dedup_s, 1), "workers": a.workers,
        "cpus": os.cpu_count(), "load_avg_at_end": os.getloadavg(),
        "config": {"models": a.models, "variants": a.variants, "tiles": a.tiles, "batch": cfg.batch,
                   "max_source_chars": cfg.max_source_chars, "threshold": a.threshold,
                   "reroll": cfg.reroll},
        "jobs_done": len({r["meta"]["unit_id"] for r in iter_jsonl(pairs)}), "jobs_planned": s.jobs,
        "new_pairs_this_run": s.pairs, "stats": s.stats,
        "pairs": len(rows), "distinct_pairs": distinct, "dedup_counts": counts,
        "families": len({f for f, _ in per}), "per_family_pipeline": {f"{f}/{p}": n for (f, p), n in sorted(per.items())},
        "pairs_per_s": round(s.pairs / wall, 2), "distinct_per_s_estimate": round(s.pairs / wall * distinct / max(len(rows), 1), 2),
        "extrapolated_pairs_per_hour": round(s.pairs / wall * 3600),
        "extrapolated_distinct_per_hour": round(s.pairs / wall * 3600 * distinct / max(len(rows), 1)),
        "refactor_kept_frac": round(sum(r["meta"]["refactor"] == "kept" for r in rows) / max(len(rows), 1), 3),
        "ptx_tokens": quantiles([r["meta"]["ptx_tokens"] for r in rows]),
        # without --no-reroll only: the Rolled-PTX is then made by `ptx export --rolled`
        "rolled_tokens": quantiles([r["meta"].get("rolled_tokens", 0) for r in rows]) if cfg.reroll else None,
        "roundtrip_ok_frac": (round(sum(bool(r["meta"].get("roundtrip_ok")) for r in rows) / max(len(rows), 1), 3)
                              if cfg.reroll else None),
    }
    (a.out / "augment.json").write_text(json.dumps(report, indent=2))
    if rows:
        figures(rows, a.out)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

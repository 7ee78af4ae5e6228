"""Rolled-PTX on the pairs `kernelmill ptx augment` made (issue 16 item 3): PTX never tuned on.

Reads a pairs file of `ptx augment` (JSON lines with `source` = the kernel's CUDA and `ptx`),
takes a seeded sample of distinct kernels, rerolls each PTX with the default RerollConfig
(or `--augment-config`: the one `ptx augment` itself uses), checks expand(reroll(P)) == P,
and reports mean / median / overall token reduction (overall = 1 - sum(rolled) / sum(PTX),
the paper's "average PTX length" figure) for kernels with and without unrolled loops.

"With unrolled loops" is decided from the CUDA source, independently of the reroll: the
rule of benchmarks/ptx_public_reroll.py (`#pragma unroll` other than 1, or a `for` over
compile-time constant bounds), or, because TVM unrolls explicitly in TIR and prints the
copies, straight-line copies in the source: some block of 1-16 lines that repeats right
after itself with only its integer literals changed (`acc[0] = ...a[k*4 + 0]...;` then
`acc[1] = ...a[k*4 + 1]...;`).

    python benchmarks/ptx_augmented_reroll.py /tmp/aug/pairs.jsonl --sample 600 --json out.json
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from ptx_heldout_reroll import line, measure  # noqa: E402
from ptx_public_reroll import classify, constant_names  # noqa: E402

from kernelmill.ptx import RerollConfig, parse_module, strip_debug  # noqa: E402

_INT = re.compile(r"\b\d+\b")


def copied_block(src: str, max_period: int = 16) -> bool:
    """Whether some block of 1..max_period statement lines repeats right after itself
    with only integer literals changed (explicitly unrolled code)."""
    lines = [ln.strip() for ln in src.splitlines() if ln.strip() and ";" in ln]
    norm = [_INT.sub("N", ln) for ln in lines]
    for p in range(1, max_period + 1):
        for i in range(0, len(lines) - 2 * p + 1):
            if norm[i:i + p] == norm[i + p:i + 2 * p] and lines[i:i + p] != lines[i + p:i + 2 * p]:
                return True
    return False


def unrolled(src: str) -> tuple[bool, str]:
    yes, why = classify(src, constant_names(src))
    if yes:
        return yes, why
    return (True, "copies in the source") if copied_block(src) else (False, "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pairs", type=Path)
    ap.add_argument("--sample", type=int, default=600, help="distinct kernels measured (seeded sample)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--augment-config", action="store_true",
                    help="reroll as `ptx augment` does (greedy, no table terms), not with the defaults")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    cfg = RerollConfig(strategy="greedy", tables=False) if args.augment_config else RerollConfig()
    seen, rows_in = set(), []
    with args.pairs.open() as f:
        for ln in f:
            r = json.loads(ln)
            if r.get("ptx") and r["ptx"] not in seen:
                seen.add(r["ptx"])
                rows_in.append(r)
    random.Random(args.seed).shuffle(rows_in)
    rows = []
    t_all = time.perf_counter()
    for r in rows_in[:args.sample]:
        yes, why = unrolled(r.get("source", ""))
        meta = r.get("meta") or {}
        rows.append({"pair_id": r.get("pair_id"), "family": meta.get("model_family"), "pipeline": meta.get("pipeline"),
                     "unrolled": yes, "why": why,
                     **measure(strip_debug(parse_module(r["ptx"], r.get("pair_id", "pair"))), cfg)})
    print(f"{len(rows)} distinct kernels of {len(rows_in)} in {args.pairs} (seed {args.seed}); "
          f"config: {'augment (greedy, no tables)' if args.augment_config else 'default'}")
    print(line("with unrolled loops (source rule)", [r for r in rows if r["unrolled"]]))
    print(line("without unrolled loops", [r for r in rows if not r["unrolled"]]))
    print(line("all kernels", rows))
    print(line("kernels where a loop was found", [r for r in rows if r["loops"]]))
    for fam in sorted({r["family"] for r in rows if r["family"]}):
        print("   ", line(f"{fam}, with unrolled loops", [r for r in rows if r["family"] == fam and r["unrolled"]]))
    print(f"round trip expand(reroll(P)) == P: {sum(r['roundtrip_ok'] for r in rows)}/{len(rows)}; "
          f"reroll {sum(r['seconds'] for r in rows):.1f} s, whole {time.perf_counter() - t_all:.1f} s")
    if args.json:
        med = statistics.median
        args.json.write_text(json.dumps({"pairs": str(args.pairs), "sample": len(rows), "seed": args.seed,
                                         "augment_config": args.augment_config,
                                         "median_reduction_unrolled": med([r["reduction"] for r in rows if r["unrolled"]] or [0]),
                                         "rows": rows}, indent=1))


if __name__ == "__main__":
    main()

"""Rolled-PTX on kernels we did not tune on: benchmarks/ptx_heldout/.

`unrolled/` holds kernels written for this measurement with unrolled loops of
shapes outside benchmarks/ptx_lengths.py (predicated bodies, vector loads,
shared-memory tiles, nested unrolls of odd factors, fp16/bf16, warp-shuffle
trees, Horner/FIR/reversed/bit loops, double); `plain/` holds kernels without
unrolled loops. The unrolled files are split: `DEV` files were looked at while
improving the reroller, the others (`test`) were only measured. Each file is
compiled with nvcc -O3 for sm_90, split per kernel, debug info stripped,
rerolled, and checked: expand(reroll(P)) == P.

    python benchmarks/ptx_heldout_reroll.py [--json out.json] [--linear-only]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from kernelmill.ptx import (NvccOptions, RerollConfig, RerollStats, count_tokens, expand_module,
                            fmt_module, nvcc_ptx, parse_module, reroll_module, split_kernels, strip_debug)
from kernelmill.ptx.nvcc import demangle_full

ROOT = Path(__file__).resolve().parent / "ptx_heldout"
DEV = {"predicated.cu", "vector_loads.cu", "nested.cu", "shuffles.cu"}


def rows_for(path: Path, cfg: RerollConfig, arch: str) -> list[dict]:
    ptx = nvcc_ptx(path.read_text(), NvccOptions(arch=arch))
    kernels = split_kernels(strip_debug(parse_module(ptx, str(path))))
    names = demangle_full(list(kernels))
    return [{"set": path.parent.name, "split": "dev" if path.name in DEV else "test", "file": path.name,
             "kernel": names[entry], **measure(mod, cfg)} for entry, mod in kernels.items()]


def measure(mod, cfg: RerollConfig) -> dict:
    """Tokens before and after the reroll of one kernel's module, its loops, the time, and
    whether expand(reroll(P)) == P."""
    plain = fmt_module(mod)
    st = RerollStats()
    t0 = time.perf_counter()
    rolled = reroll_module(mod, cfg, stats=st)
    took = time.perf_counter() - t0
    a, b = count_tokens(plain), count_tokens(fmt_module(rolled))
    return {"tokens": a, "rolled": b, "reduction": 1 - b / a, "loops": st.loops, "seconds": took,
            "bytes": len(plain.encode()), "roundtrip_ok": st.failed == 0 and fmt_module(expand_module(rolled)) == plain}


def line(label: str, sel: list[dict]) -> str:
    if not sel:
        return f"{label}: none"
    red = [r["reduction"] for r in sel]
    a, b = sum(r["tokens"] for r in sel), sum(r["rolled"] for r in sel)
    return (f"{label}: {len(sel)} kernels, mean {100 * statistics.mean(red):.1f}%, median "
            f"{100 * statistics.median(red):.1f}%, overall {100 * (1 - b / a):.1f}% ({a} -> {b} tokens)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path)
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--linear-only", action="store_true", help="the paper's linear grammar only")
    args = ap.parse_args()
    cfg = RerollConfig(geometric=not args.linear_only, tables=not args.linear_only)
    rows = []
    for path in sorted(ROOT.glob("*/*.cu")):
        rows += rows_for(path, cfg, args.arch)
    un = [r for r in rows if r["set"] == "unrolled"]
    pl = [r for r in rows if r["set"] == "plain"]
    print(line("unrolled (all)", un))
    print(line("  unrolled, dev files", [r for r in un if r["split"] == "dev"]))
    print(line("  unrolled, test files", [r for r in un if r["split"] == "test"]))
    print(line("without unrolled loops", pl))
    print(line("kernels where a loop was found", [r for r in rows if r["loops"]]))
    for f in sorted({(r["set"], r["file"]) for r in rows}):
        print("   ", line(f"{f[0]}/{f[1]}", [r for r in rows if (r["set"], r["file"]) == f]))
    print(f"round trip expand(reroll(P)) == P: {sum(r['roundtrip_ok'] for r in rows)}/{len(rows)}")
    secs, mb = sum(r["seconds"] for r in rows), sum(r["bytes"] for r in rows) / 1e6
    print(f"reroll: {mb:.2f} MB in {secs:.1f} s ({mb / secs:.2f} MB/s)")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()

"""What the reroll leaves unrolled: repeated runs in Rolled-PTX output, and why they did not roll.

    python benchmarks/ptx_external/misses.py [--split tuning] [--top 10]

On each kernel's Rolled-PTX (the benchmark's path: benchmarks/ptx_external.py), every
straight-line stream (a function body, a loop body, a `{}` scope) is searched for runs of
`c >= 2` consecutive copies of a body of `p` statements whose *opcode signatures* repeat
(opcode, modifiers, operand count, guarded or not) while the reroll did not fold them. Each
run is put in the first class that fits, comparing the copies statement by statement with
the reroll's own skeletons (kernelmill.ptx.holes.split):

- `same skeleton`: every copy has the skeleton of copy 0; the hole values follow no model
  the reroll offers, or the loop did not pay for its header;
- `first copy differs`: copies 1..c-1 share a skeleton, copy 0 does not (an accumulator
  that starts at an immediate, `0f00000000`, where later copies read a register);
- otherwise by the first operand difference found: `float immediates` (hex-float
  literals differ: taps, thresholds), `reg vs imm` (an operand is a register in one copy
  and a literal in another), `guard` (a predicate or its negation), `symbol` (other
  names), `other`.

A run's weight is the tokens its copies after the first hold (what a perfect loop would
save before its header). The classes are counted per run and weighted.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import ptx_external as pe  # noqa: E402

from kernelmill.ptx import RerollConfig, count_tokens, parse_module, reroll_text  # noqa: E402
from kernelmill.ptx.holes import split  # noqa: E402
from kernelmill.ptx.syntax import Addr, Block, Function, Imm, Instr, Label, Loop, Sym, fmt_stmt  # noqa: E402

MAX_P = 24


def sig(s) -> tuple:
    if isinstance(s, Instr):
        return (s.opcode, s.mods, len(s.operands), s.guard is not None)
    if isinstance(s, Loop):
        return ("for", len(s.body))
    if isinstance(s, Block):  # inline-asm scopes: by what they hold
        return ("{}",) + tuple(sig(x) for x in s.body)
    if isinstance(s, Label):  # bodies with branches: labels are numbered holes for the reroll
        return ("label",)
    return (id(s),)  # declarations are never part of a run


def streams(body):
    yield list(body)
    for s in body:
        if isinstance(s, (Loop, Block)):
            yield from streams(s.body)


def runs(stream: list) -> list[tuple[int, int, int]]:
    """Non-overlapping (pos, p, c) runs with c >= 2, greedy by covered statements."""
    sg = [sig(s) for s in stream]
    n, out, pos = len(sg), [], 0
    while pos < n:
        best = None
        for p in range(1, min(MAX_P, (n - pos) // 2) + 1):
            c = 1
            while pos + (c + 1) * p <= n and sg[pos + c * p:pos + (c + 1) * p] == sg[pos:pos + p]:
                c += 1
            # a body of one repeated statement kind inside a bigger body counts as the bigger one
            if c >= 2 and p * c >= 4 and (best is None or p * c > best[1] * best[2]):
                best = (pos, p, c)
        if best:
            out.append(best)
            pos += best[1] * best[2]
        else:
            pos += 1
    return out


def _diff(a, b) -> str | None:
    if type(a) is not type(b):
        kinds = {type(a).__name__, type(b).__name__}
        return "reg vs imm" if kinds == {"Reg", "Imm"} else "other"
    if isinstance(a, Imm) and a.text != b.text and not (a.is_dec and b.is_dec):
        return "float immediates"
    if isinstance(a, Sym) and a.name != b.name:
        return "symbol"
    if isinstance(a, Addr):
        for x, y in ((a.base, b.base), *zip(a.rest, b.rest)):
            if x is not None and y is not None and (d := _diff(x, y)):
                return d
    return None


def classify(copies: list[list]) -> str:
    sks = [[split(s)[0] for s in cp] for cp in copies]
    if all(sk == sks[0] for sk in sks):
        return "same skeleton"
    if len(copies) > 2 and all(sk == sks[1] for sk in sks[1:]):
        return "first copy differs"
    for cp in copies[1:]:
        for a, b in zip(copies[0], cp):
            if isinstance(a, Instr) and isinstance(b, Instr):
                if (a.guard is None) != (b.guard is None) or (a.guard is not None and type(a.guard) is not type(b.guard)):
                    return "guard"
                for x, y in zip(a.operands, b.operands):
                    if (d := _diff(x, y)):
                        return d
    return "other"


def misses(rolled: str) -> list[dict]:
    out = []
    for f in parse_module(rolled).items:
        if not isinstance(f, Function) or f.body is None:
            continue
        for st in streams(f.body):
            for pos, p, c in runs(st):
                copies = [st[pos + k * p:pos + (k + 1) * p] for k in range(c)]
                w = sum(count_tokens("\n".join(fmt_stmt(s))) for cp in copies[1:] for s in cp)
                ops = " ".join(s.opcode for s in copies[0] if isinstance(s, Instr))[:80]
                cls = classify(copies)
                if any(isinstance(s, Label) for s in copies[0]):
                    cls += ", body with branches"
                out.append({"class": cls, "p": p, "c": c, "weight": w, "ops": ops})
            out += _mov_runs(st)
    return out


def _mov_runs(st: list) -> list[dict]:
    """Runs that repeat only once `mov`s are left out: copies that differ in statement count
    because nvcc materialises a constant or a zero in some copies only (shuffle offsets,
    `mov.f32 %f5, 0f00000000` before a guarded load). Counted only where the copies' lengths
    in the real stream differ (equal lengths are the classes above)."""
    keep = [k for k, s in enumerate(st) if not (isinstance(s, Instr) and s.opcode == "mov")]
    sub = [st[k] for k in keep]
    out = []
    for pos, p, c in runs(sub):
        starts = [keep[pos + j * p] for j in range(c)] + [keep[pos + c * p - 1] + 1]
        lens = {b - a for a, b in zip(starts, starts[1:])}
        if len(lens) == 1:
            continue
        w = sum(count_tokens("\n".join(fmt_stmt(s))) for s in st[starts[1]:starts[-1]])
        ops = " ".join(s.opcode for s in st[starts[0]:starts[1]] if isinstance(s, Instr))[:80]
        out.append({"class": "copies differ by mov statements", "p": p, "c": c, "weight": w, "ops": ops})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", choices=("tuning", "heldout", "all"), default="tuning")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--cache", type=Path, default=Path("/tmp/kernelmill-ptx-external"))
    ap.add_argument("--top", type=int, default=8, help="examples printed per class")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    manifest = json.loads((pe.ROOT / "manifest.json").read_text())
    version, found = pe.nvcc_version(), []
    for e in manifest["files"]:
        if args.split not in ("all", e["split"]):
            continue
        try:
            rows = pe.kernels_of(e, args.arch, args.cache, version)
        except pe.CompileFailed:
            continue
        for r in rows:
            for m in misses(reroll_text(r["plain"], cfg=RerollConfig())):
                found.append({"file": r["file"], "kernel": r["kernel"][:50], "tokens": count_tokens(r["plain"]), **m})
    n, w = Counter(), Counter()
    ex = defaultdict(list)
    for m in found:
        n[m["class"]] += 1
        w[m["class"]] += m["weight"]
        ex[m["class"]].append(m)
    print(f"{len(found)} unrolled runs left, {sum(w.values())} tokens in copies after the first")
    for cls, wt in w.most_common():
        print(f"{cls}: {n[cls]} runs, {wt} tokens, in {len({(m['file'], m['kernel']) for m in ex[cls]})} kernels")
        for m in sorted(ex[cls], key=lambda m: -m["weight"])[:args.top]:
            print(f"    {m['weight']:5} p={m['p']:2} c={m['c']:2} {m['file']} {m['kernel']}: {m['ops']}")
    if args.json:
        args.json.write_text(json.dumps(found, indent=1) + "\n")


if __name__ == "__main__":
    main()

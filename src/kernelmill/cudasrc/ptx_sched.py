"""One PTX instruction as `ptx_equiv` compares it, and the reordering search.

An instruction's shape (all but its virtual registers' names), the registers it defines
and uses, its kind (pure, load, store-like, warp collective, fence) and state space; the
dependence DAG of a segment; and the search for an order of B's segment that reads as A's
under one register bijection. The rules are stated in `ptx_equiv`'s docstring.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..ptx.syntax import Addr, Imm, Instr, Neg, Paren, Pipe, Reg, Sym, Vec
from .symbols import normalize_symbol

_VREG = re.compile(r"^(%[A-Za-z_]+?)(\d+)$")
_PURE = set("""add sub mul mad mul24 mad24 sad div rem abs neg min max popc clz bfind fns brev bfe bfi
 bmsk szext dp4a dp2a copysign fma rcp sqrt rsqrt sin cos lg2 ex2 tanh testp set setp selp slct and or
 xor not cnot lop3 shf shl shr mov cvt cvta prmt isspacep addc subc madc""".split())
_LOADS, _STORES = {"ld", "ldu", "prefetch", "prefetchu"}, {"st", "atom", "red"}
_NO_DEST = {"st", "red", "prefetch", "prefetchu"}
_COMMUTATIVE = {"add", "addc", "mul", "mul24", "mad", "mad24", "fma", "min", "max", "and", "or", "xor"}
_COLLECTIVE = {"shfl", "vote", "match", "redux", "activemask"}
_ORDERED_LOAD = {".volatile", ".relaxed"}
# memory-model orderings that order accesses to every location: fences
_ORDERING = {".acquire", ".release", ".acq_rel", ".sc", ".mmio"}
_SPACES = {".global": "global", ".shared": "shared", ".local": "local", ".const": "const", ".param": "param"}
# special registers whose value may change while a thread runs
_TIMERS = ("%clock", "%globaltimer", "%pm", "%warpid", "%smid")
_CARRY = "%%carry"  # the implicit carry flag, as a register no PTX text can name


@dataclass
class Ins:
    instr: Instr
    key: tuple          # shape: everything but the names of virtual registers
    vregs: tuple        # per operand (guard first), its virtual registers
    shapes: tuple       # per operand (guard first), its shape
    defs: frozenset
    uses: frozenset
    kind: str           # pure | load | store | coll | fence
    space: str


def _regs(o, syms: bool = False) -> list[str]:
    """Registers in an operand; with `syms` also plain names (a `.reg .b32 temp;` register
    is written as a name, so dependences count every name: more edges, never fewer)."""
    if isinstance(o, Reg) or (syms and isinstance(o, Sym)):
        return [o.name]
    if isinstance(o, Neg):
        return _regs(o.operand, syms)
    if isinstance(o, (Vec, Paren)):
        return [r for x in o.items for r in _regs(x, syms)]
    if isinstance(o, Pipe):
        return _regs(o.left, syms) + _regs(o.right, syms)
    if isinstance(o, Addr):
        return (_regs(o.base, syms) if o.base is not None else []) + [r for x in o.rest for r in _regs(x, syms)]
    return []


def _shape(o, vp: set[str]):
    if isinstance(o, Reg):
        m = _VREG.match(o.name)
        return ("R", m.group(1)) if m and m.group(1) in vp else ("S", o.name)
    if isinstance(o, Imm):
        return ("I", o.text)
    if isinstance(o, Sym):
        return ("Y", normalize_symbol(o.name))
    if isinstance(o, Neg):
        return ("!", _shape(o.operand, vp))
    if isinstance(o, (Vec, Paren)):
        return (type(o).__name__, *(_shape(x, vp) for x in o.items))
    if isinstance(o, Pipe):
        return ("|", _shape(o.left, vp), _shape(o.right, vp))
    if isinstance(o, Addr):
        off = o.offset.text if isinstance(o.offset, Imm) else o.offset
        return ("A", None if o.base is None else _shape(o.base, vp), off, o.op, o.bracket,
                tuple(_shape(x, vp) for x in o.rest))
    return ("?", repr(o))  # Rolled-PTX operands: never in nvcc output, compared as written


def _kind(ins: Instr) -> tuple[str, str]:
    op, mods = ins.opcode, set(ins.mods)
    names = [r for o in ins.operands for r in _regs(o)]
    if any(n.startswith(_TIMERS) for n in names) or mods & _ORDERING:
        return "fence", ""
    space = next((_SPACES[m.split("::")[0]] for m in ins.mods if m.split("::")[0] in _SPACES), "generic")
    if op in _LOADS:
        return ("store" if mods & _ORDERED_LOAD else "load"), space
    if op in _STORES:
        return "store", space
    if op in _COLLECTIVE:
        return "coll", ""
    return ("pure" if op in _PURE else "fence"), ""


def analyse(ins: Instr, vp: set[str]) -> Ins:
    kind, space = _kind(ins)
    ops = ins.operands
    dest = () if ins.opcode in _NO_DEST or not ops else tuple(_regs(ops[0], True))
    src = [r for o in (ops[1:] if dest else ops) for r in _regs(o, True)]
    if ins.guard is not None:
        src += _regs(ins.guard, True) + list(dest)  # a guarded write may keep the old value
    defs, uses = set(dest), set(src)
    if ".cc" in ins.mods:
        defs.add(_CARRY)
    if ins.opcode in ("addc", "subc", "madc"):
        uses.add(_CARRY)
    shapes = (None if ins.guard is None else _shape(ins.guard, vp), *(_shape(o, vp) for o in ops))
    # the two factors / terms of a commutative op may come in either order: the key
    # holds them as a pair sorted by shape, `unify` tries both pairings
    key = (ins.opcode, ins.mods, shapes[:2],
           tuple(sorted(shapes[2:4], key=repr)) if _commutes(ins) else shapes[2:4], shapes[4:])
    vregs = tuple(() if o is None else tuple(r for r in _regs(o) if (m := _VREG.match(r)) and m.group(1) in vp)
                  for o in (ins.guard, *ops))
    return Ins(ins, key, vregs, shapes, frozenset(defs), frozenset(uses), kind, space)


def _commutes(ins: Instr) -> bool:
    """a op b == b op a, bit for bit (IEEE add, mul and fma's product commute; NaN results
    are canonical in PTX): the operands at 1 and 2 may be swapped."""
    return ins.opcode in _COMMUTATIVE and len(ins.operands) >= 3 and ins.opcode not in _NO_DEST


def unify(a: Ins, b: Ins, fwd: dict, back: dict) -> list | None:
    """Extend the bijection so that b is a renamed a (with the two commuting operands
    of b in either order); the registers added, or None."""
    if a.key != b.key:
        return None
    orders = [b.vregs]
    if a.shapes[2:4] != b.shapes[2:4]:  # the pairing with b's operands swapped is the only one
        orders = []
    if len(b.vregs) >= 4 and a.key[0] in _COMMUTATIVE and a.shapes[2] == b.shapes[3] and a.shapes[3] == b.shapes[2]:
        orders.append(b.vregs[:2] + (b.vregs[3], b.vregs[2]) + b.vregs[4:])
    for bv in orders:
        added = []
        for ra, rb in zip((r for op in a.vregs for r in op), (r for op in bv for r in op)):
            x, y = fwd.get(ra), back.get(rb)
            if x is None and y is None:
                fwd[ra], back[rb] = rb, ra
                added.append(ra)
            elif x != rb or y != ra:
                undo(added, fwd, back)
                break
        else:
            return added
    return None


def undo(added: list, fwd: dict, back: dict) -> None:
    for ra in added:
        del back[fwd.pop(ra)]


def _mem_conflict(x: Ins, y: Ins) -> bool:
    return ("store" in (x.kind, y.kind) and
            (x.space == y.space or "generic" in (x.space, y.space)))


def _dag(seg: list[Ins]) -> list[list[int]]:
    """Successors of each instruction of B's segment (the edges of `ptx_equiv`'s rule 3)."""
    succ: list[set[int]] = [set() for _ in seg]
    last_def: dict[str, int] = {}
    readers: dict[str, list[int]] = {}
    mem: list[int] = []
    coll = None
    for j, ins in enumerate(seg):
        for r in ins.uses:
            if r in last_def:
                succ[last_def[r]].add(j)
        for r in ins.defs:
            if r in last_def:
                succ[last_def[r]].add(j)
            for u in readers.get(r, ()):
                if u != j:
                    succ[u].add(j)
        for r in ins.uses:
            readers.setdefault(r, []).append(j)
        for r in ins.defs:
            last_def[r], readers[r] = j, []
        if ins.kind in ("load", "store"):
            for i in mem:
                if _mem_conflict(seg[i], ins):
                    succ[i].add(j)
            mem.append(j)
        elif ins.kind == "coll":
            if coll is not None:
                succ[coll].add(j)
            coll = j
    return [sorted(s) for s in succ]


def match_segment(a: list[Ins], b: list[Ins], fwd: dict, back: dict, budget: int) -> int:
    """Schedule B to read as A; -1 on success, else the length of the longest A prefix
    matched (for the message). Backtracks over equal-shaped candidates."""
    n = len(a)
    if n != len(b):
        return 0
    succ = _dag(b)
    indeg = [0] * n
    for s in succ:
        for j in s:
            indeg[j] += 1
    ready: dict[tuple, set[int]] = {}
    for j in range(n):
        if indeg[j] == 0:
            ready.setdefault(b[j].key, set()).add(j)

    def take(j: int) -> None:
        ready[b[j].key].discard(j)
        for k in succ[j]:
            indeg[k] -= 1
            if indeg[k] == 0:
                ready.setdefault(b[k].key, set()).add(k)

    def give_back(j: int) -> None:
        for k in succ[j]:
            if indeg[k] == 0:
                ready[b[k].key].discard(k)
            indeg[k] += 1
        ready[b[j].key].add(j)

    frames: list[list] = []  # [candidates, next index, chosen, registers added]
    best = 0
    while len(frames) < n or (frames and frames[-1][2] is None):
        if len(frames) == 0 or frames[-1][2] is not None:
            frames.append([sorted(ready.get(a[len(frames)].key, ())), 0, None, []])
        f, pos = frames[-1], len(frames) - 1
        while f[1] < len(f[0]) and f[2] is None:
            j = f[0][f[1]]
            f[1] += 1
            budget -= 1
            added = unify(a[pos], b[j], fwd, back)
            if added is not None:
                f[2], f[3] = j, added
                take(j)
        if f[2] is not None:
            best = max(best, pos + 1)
            continue
        frames.pop()  # no candidate left here: undo the previous choice and try its next
        if not frames or budget < 0:
            for g in reversed(frames):
                give_back(g[2])
                undo(g[3], fwd, back)
            return best
        g = frames[-1]
        give_back(g[2])
        undo(g[3], fwd, back)
        g[2], g[3] = None, []
    return -1

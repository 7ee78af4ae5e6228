"""PTX equality up to register renaming and dependence-preserving reordering (issue 44).

nvcc often emits the same instructions for a refactored source but schedules them in
another order (hoisting an index into a `const auto` changes the order its pieces are
computed in). `equivalent_ptx(a, b)` accepts that, and only that. The normalisation:

1. Comments, `.loc`/`.file` debug directives and `.reg` declarations are ignored (the
   declared counts follow the numbering). Per-compile hashes in internal symbol names
   are blanked (`normalize_symbol`). Every other module item, function header,
   directive, label and scope brace must be equal, in the same order.
2. Virtual registers (those whose prefix a `.reg %x<N>` of the function declares) are
   renamed by ONE bijection per function, prefix to same prefix; every other register
   (`%tid.x`, ...) and every symbol, immediate, opcode, modifier and guard is compared
   as written, operands in place, except that the two source operands of a commutative
   op (`add addc mul mul24 mad mad24 fma min max and or xor`: for `mad`/`fma` the two
   factors) may be swapped: a*b and b*a are the same bits (IEEE-754 add and multiply
   commute; PTX gives NaN results no payload to tell apart).
3. A *fence* stays in place: `bra`, `ret`, `call`, `bar`, `membar`, `fence`, any opcode
   not listed below as pure, memory or collective, and any read of `%clock*`,
   `%globaltimer*`, `%pm*`, `%warpid`, `%smid`. Between fences, labels, directives and braces, a *segment*
   of B may be reordered: B is accepted when some topological order of B's dependence
   DAG equals A's segment under the bijection. The DAG has an edge i -> j (i before j
   in B) when
   - registers: j reads what i writes (RAW), j writes what i reads (WAR) or both write
     the same register (WAW); predicates, the carry flag of `.cc`/`addc`/`subc`/`madc`,
     and the old value of a register under a guarded write count as registers;
   - memory: both access memory, at least one writes, and their state spaces may alias
     (the same space, or one is generic). Stores, atomics, `red` and volatile / relaxed
     loads write; plain loads (`ld`, `ldu`, `prefetch`) read; an access with acquire,
     release, acq_rel, sc or mmio semantics orders every location: it is a fence;
   - warp collectives (`shfl`, `vote`, `match`, `redux`, `activemask`) keep their order.
   Any topological order of that DAG computes the same registers and memory as B, so
   an accepted B means the same as A.

The search (`ptx_sched`) schedules B against A's order, trying ready B instructions of
A's shape in B's order and backtracking; a search over its budget rejects (never accepts).
"""

from __future__ import annotations

from collections import Counter

from ..ptx.lexer import PtxSyntaxError
from ..ptx.parser import parse_module
from ..ptx.syntax import Block, Comment, Directive, Instr, Label, fmt_stmt
from . import ptx_sched as sched
from .symbols import normalize_symbol


def _units(body, vp: set[str]) -> list:
    """The body as ("fixed", key) / ("fence", sched.Ins) / ("seg", [sched.Ins]) units."""
    units: list = []
    seg: list[sched.Ins] = []

    def flush():
        if seg:
            units.append(("seg", list(seg)))
            seg.clear()

    def walk(stmts):
        for s in stmts:
            if isinstance(s, Comment) or (isinstance(s, Directive) and s.name in (".reg", ".loc", ".file")):
                continue
            if isinstance(s, Instr):
                ins = sched.analyse(s, vp)
                if ins.kind != "fence":
                    seg.append(ins)
                    continue
                flush()
                units.append(("fence", ins))
                continue
            flush()
            if isinstance(s, Block):
                units.append(("fixed", "{"))
                walk(s.body)
                flush()
                units.append(("fixed", "}"))
            elif isinstance(s, Directive):
                units.append(("fixed", tuple(normalize_symbol(t) for t, _ in s.tokens)))
            elif isinstance(s, Label) and s.expr is None:
                units.append(("fixed", ("label", s.name)))
            else:
                units.append(("fixed", ("?", repr(s))))

    walk(body)
    flush()
    return units


def _prefixes(body) -> set[str]:
    out = set()
    for s in body:
        if isinstance(s, Directive) and s.name == ".reg":
            out |= {t for t, _ in s.tokens if t.startswith("%")}
        elif isinstance(s, Block):
            out |= _prefixes(s.body)
    return out


def _header(f) -> tuple:
    toks = lambda ts: tuple(normalize_symbol(t) for t, _ in ts)  # noqa: E731
    return (f.kind, normalize_symbol(f.name), toks(f.pre), toks(f.post),
            None if f.ret is None else tuple(map(toks, f.ret)),
            None if f.params is None else tuple(map(toks, f.params)))


def _same_function(fa, fb, budget: int) -> str:
    if _header(fa) != _header(fb):
        return "headers differ"
    if (fa.body is None) != (fb.body is None):
        return "a declaration against a definition"
    if fa.body is None:
        return ""
    ua, ub = _units(fa.body, _prefixes(fa.body)), _units(fb.body, _prefixes(fb.body))
    if [u[0] for u in ua] != [u[0] for u in ub]:
        return "labels, fences or directives differ in number or place"
    fwd: dict[str, str] = {}
    back: dict[str, str] = {}
    for i, ((kind, xa), (_, xb)) in enumerate(zip(ua, ub)):
        if kind == "fixed" and xa != xb:
            return f"unit {i} differs: {xa!r} vs {xb!r}"
        if kind == "fence" and sched.unify(xa, xb, fwd, back) is None:
            return f"unit {i} differs: {fmt_stmt(xa.instr, 0)[0]!r} vs {fmt_stmt(xb.instr, 0)[0]!r}"
        if kind == "seg":
            got = sched.match_segment(xa, xb, fwd, back, budget + 40 * len(xa))
            if got >= 0:
                where = fmt_stmt(xa[got].instr, 0)[0] if got < len(xa) else "(lengths differ)"
                same = Counter(x.key for x in xa) == Counter(x.key for x in xb)
                return (f"segment {i} ({len(xa)} vs {len(xb)} instructions, "
                        f"{'the same instructions' if same else 'other instructions'}): no dependence-"
                        f"preserving order of B matches A from instruction {got}: {where!r}")
    return ""


def equivalent_ptx(a: str, b: str, budget: int = 20000) -> tuple[bool, str]:
    """Whether two PTX modules are equal under the normalisation of the module docstring,
    and if not, why."""
    try:
        ma, mb = parse_module(a, "<a>"), parse_module(b, "<b>")
    except PtxSyntaxError as exc:
        return False, f"PTX cannot be read: {exc}"
    ia = [x for x in ma.items if not isinstance(x, Comment)]
    ib = [x for x in mb.items if not isinstance(x, Comment)]
    if len(ia) != len(ib):
        return False, f"{len(ia)} module items vs {len(ib)}"
    for xa, xb in zip(ia, ib):
        if isinstance(xa, Directive) and isinstance(xb, Directive):
            if tuple(normalize_symbol(t) for t, _ in xa.tokens) != tuple(normalize_symbol(t) for t, _ in xb.tokens):
                return False, f"module directive differs: {xa.name} vs {xb.name}"
        elif isinstance(xa, Directive) or isinstance(xb, Directive):
            return False, "a directive against a function"
        else:
            why = _same_function(xa, xb, budget)
            if why:
                return False, f"function {normalize_symbol(xa.name)}: {why}"
    return True, ""

"""Peeled copies taken back into the loop beside them, with pinned values (session 21).

nvcc peels the last copy of an unrolled accumulator chain where that copy writes the register
the code after reads (`fma %f28+i, %f12+i, %f20+i, %f27+i!73` for three copies, then
`fma %f2, %f15, %f23, %f30`), and the first copy where it reads what the code before left.
The search cannot offer those loops cheaply (session 16: "loops offered with the last copy
pinned", +11% CPU), so this is a rewrite of the output, as firsts.py is: where the statements
right after a loop `range(n)` are its body at `i = n` but for a few values, the loop becomes
`range(n+1)` with those values pinned at copy n (`%f28+i!3:2`) or its tables extended by one
value; the statements right before it likewise become copy 0 (the body shifted by one copy).

A peeled copy may lack up to two of the body's statements (a `+0` folded away: copy 0 reads
`%r107` where the others add an offset to it first; a shuffle ladder's last copy reuses an
offset register): those are guarded absent in that copy with presence.py's guards, `@0+i` or
`@n-i`; or have one statement more, guarded present there alone (`@1-i`, `@1-n+i`). Only
where presence guards are on (RerollConfig.presence).

Only loops `range(n)` whose body is at most 16 instructions (no labels, no presence guards), and
statements that do not use the loop's variable. A hole of the peeled copy that follows the
body's model keeps it, with the terms of the loops around (`%f13+j*8` after `%f10+i+j*8` for
three copies); one off the model is pinned (`!3:2`) only where the hole and the value hold no
other variable (a pin replaces the whole expression in its copy), and a table of the loop's
variable alone takes one value more. Registers, numbers, offsets (a missing offset is 0),
parameter and label names. Each rewrite is kept only where its text is shorter, its expansion
equals what it replaces in every copy of the loops around (expand_stmts) and it reads back as
written; reroll_stmts then runs one more pass, so the loops that took a copy may fold.
"""

from __future__ import annotations

from itertools import combinations

from .expand import expand_stmts
from .lexer import count_tokens
from .parser import parse_statements
from .syntax import (
    Addr,
    Imm,
    ImmTable,
    Instr,
    Loop,
    Neg,
    Paren,
    Pipe,
    Reg,
    Sym,
    VarExpr,
    VarReg,
    Vec,
    fmt_stmts,
)

_MAX_BODY = 16  # statements of a body compared with the peeled copy
_MAX_MISSING = 2  # statements of the body a peeled copy may lack
_MAX_ENVS = 256  # copies of the loops around in which a rewrite is checked


class _Off(Exception):
    """The operand cannot take the peeled copy's value."""


def _num(name: str, pct: bool) -> tuple[str, int] | None:
    """`%f12` -> ("%f", 12); a parameter or label name with its number (`..._param_3`) where not `pct`."""
    k = len(name)
    while k > 0 and name[k - 1].isdigit():
        k -= 1
    if k == len(name) or k == 0 or (name[k] == "0" and k < len(name) - 1) or name.startswith("%") != pct:
        return None
    return name[:k], int(name[k:])


def _target(s, prefix: str | None) -> VarExpr | None:
    """The peeled copy's operand as an expression: a number, a register (or a parameter's or
    label's name) of `prefix`, or a rolled one of the loops around (their variables)."""
    t = type(s)
    if prefix is None:
        if t is Imm and s.is_dec:
            return VarExpr(int(s.text))
        return s if t is VarExpr else None
    if t is Reg or t is Sym:
        r = _num(s.name, t is Reg)
        return VarExpr(r[1]) if r is not None and r[0] == prefix else None
    if t is VarReg and s.prefix == prefix:
        return s.expr
    return None


def _norm(e: VarExpr) -> tuple:
    return (e.base, tuple(sorted((v, c) for v, c in e.terms if c)), tuple(sorted(e.shifts)),
            tuple(sorted(e.tables)), tuple(sorted(e.pins)))


def _expr(e: VarExpr, var: str, copy: int, want: VarExpr, first: bool) -> VarExpr:
    """`e` with the value `want` at `copy` (`want` may hold the variables of the loops around);
    with `first`, `e` is shifted one copy on (its copy i is now i+1) and `copy` is 0."""
    if e.shifts or any(v != var for v, _, _ in e.pins) or want.pins:
        raise _Off
    base, pins = e.base, e.pins
    terms = tuple((v, c) for v, c in e.terms if c)
    own = sum(c for v, c in terms if v == var)
    rest = tuple((v, c) for v, c in terms if v != var)
    mine = [vals for v, vals in e.tables if v == var]
    others = tuple(t for t in e.tables if t[0] != var)
    if first:
        base -= own
        pins = tuple((v, t + 1, w) for v, t, w in pins)
    if mine:  # one table of the loop's variable, alone with a constant: one value more
        if len(mine) != 1 or own or rest or others or want.terms or want.tables or want.shifts \
                or (not first and len(mine[0]) != copy):
            raise _Off
        d = want.base - base
        vals = (d,) + mine[0] if first else mine[0] + (d,)
        return VarExpr(base, (), (), ((var, vals),), pins)
    shifted = VarExpr(base, terms, (), others, pins)
    hit = [w for v, t, w in pins if t == copy]
    at = VarExpr(hit[0]) if hit else VarExpr(base + own * copy, rest, (), others)
    if _norm(at) == _norm(want):
        return shifted
    if hit or rest or others or want.terms or want.tables or want.shifts:
        raise _Off
    pin = (var, copy, want.base)
    return VarExpr(base, terms, (), (), (pin,) + pins if first else pins + (pin,))


def _op(b, s, var: str, copy: int, first: bool):
    """The body's operand `b` made to give the peeled copy's operand `s` at `copy`."""
    tb = type(b)
    if tb is VarExpr:
        w = _target(s, None)
        if w is None:
            raise _Off
        return _expr(b, var, copy, w, first)
    if tb is VarReg:
        w = _target(s, b.prefix)
        if w is None:
            raise _Off
        return VarReg(b.prefix, _expr(b.expr, var, copy, w, first))
    if tb is ImmTable:
        if type(s) is not Imm or b.var != var or (not first and len(b.items) != copy):
            raise _Off
        return ImmTable(var, (s.text,) + b.items if first else b.items + (s.text,))
    if b == s:
        return b
    if tb is Reg or tb is Sym:
        r = _num(b.name, tb is Reg)
        if r is None:
            raise _Off
        w = _target(s, r[0])
        if w is None:
            raise _Off
        return VarReg(r[0], _expr(VarExpr(r[1]), var, copy, w, first))
    if tb is Imm:
        w = _target(s, None)
        if not b.is_dec or w is None:
            raise _Off
        return _expr(VarExpr(int(b.text)), var, copy, w, first)
    if tb is not type(s):
        raise _Off
    if tb is Addr:
        if b.op != s.op or b.bracket != s.bracket or len(b.rest) != len(s.rest) \
                or (b.base is None) != (s.base is None):
            raise _Off
        bo, so = b.offset, s.offset
        if (bo is None) != (so is None):  # a missing offset is 0 (an offset of 0 is never printed)
            if type(bo) is Imm or type(so) is Imm and not so.is_dec:
                raise _Off
            bo, so = (VarExpr(0), so) if bo is None else (bo, Imm("0"))
        return Addr(None if b.base is None else _op(b.base, s.base, var, copy, first),
                    None if bo is None else _op(bo, so, var, copy, first), b.op,
                    tuple(_op(x, y, var, copy, first) for x, y in zip(b.rest, s.rest)), b.bracket)
    if tb is Vec or tb is Paren:
        if len(b.items) != len(s.items):
            raise _Off
        return tb(tuple(_op(x, y, var, copy, first) for x, y in zip(b.items, s.items)))
    if tb is Neg:
        return Neg(_op(b.operand, s.operand, var, copy, first))
    if tb is Pipe:
        return Pipe(_op(b.left, s.left, var, copy, first), _op(b.right, s.right, var, copy, first))
    raise _Off


def _stmt(b, s, var: str, copy: int, first: bool) -> Instr:
    if type(b) is not Instr or type(s) is not Instr or b.opcode != s.opcode or b.mods != s.mods \
            or len(b.operands) != len(s.operands) or (b.guard is None) != (s.guard is None):
        raise _Off
    if b.guard is not None and (type(b.guard) is VarExpr or type(s.guard) is VarExpr):  # presence guards
        raise _Off
    g = None if b.guard is None else _op(b.guard, s.guard, var, copy, first)
    ops = tuple(_op(x, y, var, copy, first) for x, y in zip(b.operands, s.operands))
    return Instr(b.opcode, b.mods, ops, g, b.line)


def _vars(o) -> set:
    t = type(o)
    if t is VarExpr:
        return o.vars
    if t is VarReg:
        return o.expr.vars
    if t is ImmTable:
        return {o.var}
    if t is Addr:
        return set().union(*(_vars(x) for x in (o.base, o.offset, *o.rest) if x is not None))
    if t is Vec or t is Paren:
        return set().union(*(_vars(x) for x in o.items))
    if t is Neg:
        return _vars(o.operand)
    if t is Pipe:
        return _vars(o.left) | _vars(o.right)
    return set()


def _peelable(s, var: str) -> bool:
    """An instruction that could be a peeled copy of the loop over `var` (it does not use `var`)."""
    if type(s) is not Instr or (s.guard is not None and type(s.guard) is VarExpr):
        return False
    return not any(var in _vars(o) for o in s.operands) and (s.guard is None or var not in _vars(s.guard))


def _tokens(stmts) -> int:
    return count_tokens(fmt_stmts(stmts))


def _envs(outer: tuple) -> list[dict] | None:
    envs = [{}]
    for v, r in outer:
        envs = [{**e, v: x} for e in envs for x in r]
        if len(envs) > _MAX_ENVS:
            return None
    return envs


def _shift_op(o, var: str):
    """An operand of a copy that the peeled first copy lacks, shifted one copy on (its value in
    copy 0, where the statement is absent, is never read)."""
    t = type(o)
    if t is VarExpr:
        if o.shifts:
            raise _Off
        own = sum(c for v, c in o.terms if v == var)
        tables = tuple((v, (vals[0],) + vals if v == var else vals) for v, vals in o.tables)
        return VarExpr(o.base - own, o.terms, (), tables, tuple((v, x + 1 if v == var else x, w) for v, x, w in o.pins))
    if t is VarReg:
        return VarReg(o.prefix, _shift_op(o.expr, var))
    if t is ImmTable:
        return ImmTable(o.var, (o.items[0],) + o.items) if o.var == var else o
    if t is Addr:
        off = o.offset if o.offset is None or type(o.offset) is Imm else _shift_op(o.offset, var)
        return Addr(None if o.base is None else _shift_op(o.base, var), off, o.op,
                    tuple(_shift_op(x, var) for x in o.rest), o.bracket)
    if t is Vec or t is Paren:
        return t(tuple(_shift_op(x, var) for x in o.items))
    if t is Neg:
        return Neg(_shift_op(o.operand, var))
    if t is Pipe:
        return Pipe(_shift_op(o.left, var), _shift_op(o.right, var))
    return o


def _absent(b, var: str, n: int, first: bool) -> Instr:
    """A body statement the peeled copy lacks: guarded to be absent there (a presence guard,
    presence.py: present where it is > 0): `@0+i` absent in copy 0, `@n-i` in copy n."""
    if type(b) is not Instr or b.guard is not None:
        raise _Off
    if first:
        return Instr(b.opcode, b.mods, tuple(_shift_op(o, var) for o in b.operands),
                     VarExpr(0, ((var, 1),)), b.line)
    return Instr(b.opcode, b.mods, b.operands, VarExpr(n, ((var, -1),)), b.line)


def _sig(s) -> tuple:
    return (s.opcode, s.mods, len(s.operands), s.guard is None) if type(s) is Instr else (id(s),)


def _alignments(body, peeled: list, presence: bool):
    """The ways the peeled statements are the body with some statements left out (at most
    _MAX_MISSING) or one statement more, in order: each a tuple of the body's index for each
    peeled statement, None for the one the body lacks."""
    p, q = len(body), len(peeled)
    want, have = [_sig(x) for x in peeled], [_sig(x) for x in body]
    if q == p:
        if want == have:
            yield tuple(range(p))
        return
    if not presence or q == 0:
        return
    if q == p + 1:
        for x in range(q):
            if want[:x] + want[x + 1:] == have and type(peeled[x]) is Instr and peeled[x].guard is None:
                yield tuple(range(x)) + (None,) + tuple(range(x, p))
        return
    if p - q > _MAX_MISSING or q > p:
        return
    for idx in combinations(range(p), q):
        if all(have[a] == w for a, w in zip(idx, want)):
            yield idx


def _extra(s: Instr, var: str, n: int, first: bool) -> Instr:
    """A statement only the peeled copy has: present in that copy alone (`@1-i`, `@1-n+i`)."""
    g = VarExpr(1, ((var, -1),)) if first else VarExpr(1 - n, ((var, 1),))
    return Instr(s.opcode, s.mods, s.operands, g, s.line)


def _absorb(loop: Loop, peeled: list, first: bool, outer: tuple, idx: tuple | None = None) -> Loop | None:
    """The loop with the peeled copy taken in (aligned by `idx`, see _alignments), or None where
    a value of it cannot be written; not yet checked, nor compared in length."""
    n, var = loop.trip, loop.var
    idx = tuple(range(len(loop.body))) if idx is None else idx
    copy = 0 if first else n
    body, k = [], 0
    try:
        for j, a in enumerate(idx):
            if a is None:
                body.append(_extra(peeled[j], var, n, first))
                continue
            while k < a:  # statements of the body the peeled copy lacks
                body.append(_absent(loop.body[k], var, n, first))
                k += 1
            body.append(_stmt(loop.body[a], peeled[j], var, copy, first))
            k = a + 1
        while k < len(loop.body):
            body.append(_absent(loop.body[k], var, n, first))
            k += 1
    except (_Off, ValueError):
        return None
    return Loop(var, 0, n + 1, 1, tuple(body))


def _exact(loop: Loop, new: Loop, peeled: list, first: bool, outer: tuple) -> bool:
    """Does `new` expand to what `loop` and its peeled copy did, and read back as written?"""
    n, body, var = loop.trip, new.body, loop.var
    used = set().union(*(_vars(o) for x in (*loop.body, *peeled) for o in (*x.operands, x.guard) if o is not None))
    envs = _envs(tuple(x for x in outer if x[0] in used))
    if envs is None:
        return False
    try:  # exact in every copy of the loops around: the copies before are the loop's as they were
        # (its values change only in the new copy, or shift with their variable), so in all of
        # them but the first only the new copy is compared
        if first:  # every statement shifted: the whole loop
            if expand_stmts([new], envs[0]) != expand_stmts(peeled + [loop], envs[0]):
                return False
        else:  # the copies before: only the statements that changed, one by one
            olds = iter(loop.body)
            for x in body:
                if type(x.guard) is VarExpr and x.guard.base == 1 - n:  # only the new copy has it
                    if any(x.guard.eval({var: k}) > 0 for k in range(n)):
                        return False
                    continue
                o = next(olds)
                if x is not o and x != o and any(expand_stmts([x], {**envs[0], var: k})
                                                 != expand_stmts([o], {**envs[0], var: k}) for k in range(n)):
                    return False
            if next(olds, None) is not None:
                return False
        at = {var: 0 if first else n}
        return all(expand_stmts(body, {**e, **at}) == expand_stmts(peeled, e) for e in envs[1 if first else 0:]) \
            and _reads_back([x for x in body if _risky(x)])
    except Exception:  # noqa: BLE001 - a value no register can hold, text that does not read back: not taken
        return False


def _risky(s: Instr) -> bool:
    """A statement of forms the format's property tests do not cover: a parameter's or label's
    name with a number written by a VarExpr, a presence guard with a negative base (`@-2+i`)."""
    return (type(s.guard) is VarExpr and s.guard.base < 0) or any(_named(o) for o in s.operands)


def _named(o) -> bool:
    t = type(o)
    if t is VarReg:
        return o.prefix[:1] != "%"
    if t is Addr:
        return any(_named(x) for x in (o.base, *o.rest) if x is not None)
    if t is Vec or t is Paren:
        return any(_named(x) for x in o.items)
    if t is Neg:
        return _named(o.operand)
    if t is Pipe:
        return _named(o.left) or _named(o.right)
    return False


def _reads_back(stmts: list) -> bool:
    """Do the statements read back as written?"""
    return not stmts or parse_statements(fmt_stmts(stmts)) == stmts


def _best(loop: Loop, stmts: list, lo: int, hi: int, first: bool, outer: tuple, presence: bool):
    """The shortest loop that takes a peeled copy of stmts[lo:hi] (first: the copy ends at hi;
    last: it starts at lo), and how many statements it took; None where none does."""
    p = len(loop.body)
    sigs = {_sig(x) for x in loop.body}
    near = stmts[max(hi - 2, 0):hi] if first else stmts[lo:lo + 2]
    if not any(_sig(x) in sigs for x in near):  # the copy's first (last) statement or the one after
        return None                              # (before) it is one of the body's: else no copy
    found = []
    for q in range(p + 1, max(p - _MAX_MISSING, 1) - 1, -1):
        seg = stmts[hi - q:hi] if first else stmts[lo:lo + q]
        if len(seg) != q or not all(_peelable(x, loop.var) for x in seg):
            continue
        was = None
        for idx in _alignments(loop.body, seg, presence):
            new = _absorb(loop, seg, first, outer, idx)
            if new is not None:
                was = _tokens([loop, *seg]) if was is None else was
                k = _tokens([new])
                if k < was:  # shorter than the loop and the copy apart
                    found.append((k - _tokens(seg), len(found), new, seg))
    for _, _, new, seg in sorted(found):  # the shortest that is exact (checked only where chosen)
        if _exact(loop, new, seg, first, outer):
            return new, len(seg)
    return None


def _fits(loop) -> bool:
    return (type(loop) is Loop and loop.start == 0 and loop.step == 1 and 0 < len(loop.body) <= _MAX_BODY
            and all(type(s) is Instr for s in loop.body))


def rewrite(stmts, outer: tuple = (), presence: bool = True) -> list:
    """The statements with peeled first and last copies taken into the loops beside them,
    where that is shorter (each loop may take several, one at a time). `outer`: the variables
    of the loops around and their ranges; `presence`: copies that lack some of the body's
    statements are taken too, those statements guarded (presence.py's guards)."""
    out: list = []
    for s in stmts:
        if type(s) is Loop:
            body = rewrite(s.body, outer + ((s.var, range(s.start, s.limit, s.step)),), presence)
            if any(a is not b for a, b in zip(body, s.body)) or len(body) != len(s.body):
                s = Loop(s.var, s.start, s.limit, s.step, tuple(body))
            while _fits(s):  # a peeled first copy
                got = _best(s, out, 0, len(out), True, outer, presence)
                if got is None:
                    break
                del out[len(out) - got[1]:]
                s = got[0]
        out.append(s)
    # peeled last copies: the statements after a loop
    res: list = []
    k = 0
    while k < len(out):
        s = out[k]
        k += 1
        while _fits(s):
            got = _best(s, out, k, len(out), False, outer, presence)
            if got is None:
                break
            k += got[1]
            s = got[0]
        res.append(s)
    return res

"""Peeled copies taken back into the loop beside them, with pinned values (session 21).

nvcc peels the last copy of an unrolled accumulator chain where that copy writes the register
the code after reads (`fma %f28+i, %f12+i, %f20+i, %f27+i!73` for three copies, then
`fma %f2, %f15, %f23, %f30`), and the first copy where it reads what the code before left.
The search cannot offer those loops cheaply (session 16: "loops offered with the last copy
pinned", +11% CPU), so this is a rewrite of the output, as firsts.py is: where the statements
right after a loop `range(n)` are its body at `i = n` but for a few values, the loop becomes
`range(n+1)` with those values pinned at copy n (`%f28+i!3:2`) or its tables extended by one
value; the statements right before it likewise become copy 0 (the body shifted by one copy).

Only loops whose body is instructions whose variables are the loop's own (a pin replaces the
whole expression in its copy, so no other variable's term may be in it) and statements that
hold no variable; never labels or presence guards. Each rewrite is kept only where its text is
shorter and its expansion equals what it replaces (expand_stmts), so the output stays exact.
"""

from __future__ import annotations

from .expand import expand_stmts
from .lexer import count_tokens
from .syntax import Addr, Imm, ImmTable, Instr, Loop, Neg, Paren, Pipe, Reg, Sym, Vec, VarExpr, VarReg, fmt_stmts

_MAX_BODY = 16  # statements of a body compared with the peeled copy


class _Off(Exception):
    """The operand cannot take the peeled copy's value."""


def _dec(o) -> int | None:
    return int(o.text) if type(o) is Imm and o.is_dec else None


def _reg(o) -> tuple[str, int] | None:
    if type(o) is not Reg:
        return None
    name = o.name
    k = len(name)
    while k > 0 and name[k - 1].isdigit():
        k -= 1
    if k == len(name) or not name.startswith("%") or (name[k] == "0" and k < len(name) - 1):
        return None
    return name[:k], int(name[k:])


def _expr(e: VarExpr, var: str, copy: int, value: int, first: bool) -> VarExpr:
    """`e` (in `var` alone) with the value `value` at `copy`; with `first`, `e` is shifted one
    copy on (its copy i is now i+1) and `copy` is 0."""
    if e.shifts or any(v != var for v in e.vars):
        raise _Off
    base, terms, tables, pins = e.base, e.terms, e.tables, e.pins
    if first:
        base -= sum(c for _, c in terms)
        pins = tuple((v, t + 1, w) for v, t, w in pins)
        if tables:  # one table: the new value goes first
            if len(tables) != 1 or terms:
                raise _Off
            v, vals = tables[0]
            return VarExpr(base, terms, (), ((v, (value - base,) + vals),), pins)
    elif tables:
        if len(tables) != 1 or terms:
            raise _Off
        v, vals = tables[0]
        if len(vals) != copy:
            raise _Off
        return VarExpr(base, terms, (), ((v, vals + (value - base,)),), pins)
    new = VarExpr(base, terms, (), (), pins)
    if new.eval({var: copy}) == value:
        return new
    if any(t == copy for _, t, _ in pins):
        raise _Off
    pin = (var, copy, value)
    return VarExpr(base, terms, (), (), (pin,) + pins if first else pins + (pin,))


def _op(b, s, var: str, copy: int, first: bool):
    """The body's operand `b` made to give the peeled copy's operand `s` at `copy`."""
    tb = type(b)
    if tb is VarExpr:
        v = _dec(s)
        if v is None:
            raise _Off
        return _expr(b, var, copy, v, first)
    if tb is VarReg:
        r = _reg(s)
        if r is None or r[0] != b.prefix:
            raise _Off
        return VarReg(b.prefix, _expr(b.expr, var, copy, r[1], first))
    if tb is ImmTable:
        if type(s) is not Imm or b.var != var or (not first and len(b.items) != copy):
            raise _Off
        return ImmTable(var, (s.text,) + b.items if first else b.items + (s.text,))
    if tb is not type(s):
        if tb is Reg:
            r, q = _reg(b), _reg(s)
            if r is None or q is None or r[0] != q[0]:
                raise _Off
            return VarReg(r[0], _expr(VarExpr(r[1]), var, copy, q[1], first))
        if tb is Imm and b.is_dec:
            v = _dec(s)
            if v is None:
                raise _Off
            return _expr(VarExpr(int(b.text)), var, copy, v, first)
        raise _Off
    if tb is Reg:
        if b == s:
            return b
        r, q = _reg(b), _reg(s)
        if r is None or q is None or r[0] != q[0]:
            raise _Off
        return VarReg(r[0], _expr(VarExpr(r[1]), var, copy, q[1], first))
    if tb is Imm:
        if b == s:
            return b
        x, y = _dec(b), _dec(s)
        if x is None or y is None:
            raise _Off
        return _expr(VarExpr(x), var, copy, y, first)
    if tb is Sym:
        if b != s:
            raise _Off
        return b
    if tb is Addr:
        if b.op != s.op or b.bracket != s.bracket or len(b.rest) != len(s.rest) \
                or (b.base is None) != (s.base is None) or (b.offset is None) != (s.offset is None):
            raise _Off
        return Addr(None if b.base is None else _op(b.base, s.base, var, copy, first),
                    None if b.offset is None else _op(b.offset, s.offset, var, copy, first), b.op,
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
    if b.guard is not None and type(b.guard) not in (Reg, Neg, VarReg):  # never a presence guard
        raise _Off
    g = None if b.guard is None else _op(b.guard, s.guard, var, copy, first)
    ops = tuple(_op(x, y, var, copy, first) for x, y in zip(b.operands, s.operands))
    return Instr(b.opcode, b.mods, ops, g, b.line)


def _plain(s) -> bool:
    """An instruction that holds no variable (what a peeled copy is)."""
    if type(s) is not Instr:
        return False
    return not any(_has_var(o) for o in s.operands) and (s.guard is None or not _has_var(s.guard))


def _has_var(o) -> bool:
    t = type(o)
    if t is VarExpr or t is VarReg or t is ImmTable:
        return True
    if t is Addr:
        return any(_has_var(x) for x in (o.base, o.offset, *o.rest) if x is not None)
    if t is Vec or t is Paren:
        return any(_has_var(x) for x in o.items)
    if t is Neg:
        return _has_var(o.operand)
    if t is Pipe:
        return _has_var(o.left) or _has_var(o.right)
    return False


def _tokens(stmts) -> int:
    return count_tokens(fmt_stmts(stmts))


def _absorb(loop: Loop, peeled: list, first: bool) -> Loop | None:
    n = loop.trip
    try:
        body = tuple(_stmt(b, s, loop.var, 0 if first else n, first) for b, s in zip(loop.body, peeled))
    except (_Off, ValueError):
        return None
    new = Loop(loop.var, 0, n + 1, 1, body)
    if _tokens([new]) >= _tokens([loop, *peeled]):
        return None
    try:
        want = expand_stmts(peeled + [loop]) if first else expand_stmts([loop] + peeled)
        if expand_stmts([new]) != want:
            return None
    except (ValueError, KeyError):
        return None
    return new


def _fits(loop) -> bool:
    return (type(loop) is Loop and loop.start == 0 and loop.step == 1 and 0 < len(loop.body) <= _MAX_BODY
            and all(type(s) is Instr for s in loop.body))


def rewrite(stmts) -> list:
    """The statements with peeled first and last copies taken into the loops beside them,
    where that is shorter (each loop may take several, one at a time)."""
    out: list = []
    for s in stmts:
        if type(s) is Loop:
            body = rewrite(s.body)
            if any(a is not b for a, b in zip(body, s.body)) or len(body) != len(s.body):
                s = Loop(s.var, s.start, s.limit, s.step, tuple(body))
            if _fits(s):
                p = len(s.body)
                while len(out) >= p and all(_plain(x) for x in out[-p:]):  # a peeled first copy
                    new = _absorb(s, out[-p:], True)
                    if new is None:
                        break
                    del out[-p:]
                    s = new
        out.append(s)
    # peeled last copies: the statements after a loop
    res: list = []
    k = 0
    while k < len(out):
        s = out[k]
        k += 1
        if _fits(s):
            p = len(s.body)
            while k + p <= len(out) and all(_plain(x) for x in out[k:k + p]):
                new = _absorb(s, out[k:k + p], False)
                if new is None:
                    break
                k += p
                s = new
        res.append(s)
    return res

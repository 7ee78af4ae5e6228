"""Tables that are linear but for their first or last value, written as a linear term and a
pinned value (syntax.VarExpr.pins, session 16).

`%f[1,6,9,12]` is `%f3+i*3` in copies 1-3 and `%f1` in copy 0: `%f3+i*3!1`. Copy 0 of an unrolled
body differs from the model of the others where it reads what the code before the loop left
(an accumulator's first source: `%f[111,30,32,34]`), or where nvcc numbered its registers
before the copies' own (a `mov` only copy 0 has). The last copy of a chain writes the register
the code after the loop reads: `%f[2,3,4,115]` is `%f2+i!3:115`. A table pays 2 tokens per
copy for that one value; a pinned value 2, or 4 with its copy.

This is a rewrite of the output (reroll.reroll_stmts runs it last), so the search and its
scores are unchanged; expansion gives the same values (the function's check still runs).
"""

from __future__ import annotations

from .lexer import count_tokens
from .syntax import Addr, Block, Imm, Instr, Loop, Neg, Paren, Pipe, Reg, Sym, Vec, VarExpr, VarReg, fmt_operand

_PLAIN = frozenset({Reg, Imm, Sym})  # operands that never hold a table


def _linear(t) -> bool:
    return all(b - a == t[1] - t[0] for a, b in zip(t, t[1:]))


def first_form(e: VarExpr) -> VarExpr | None:
    """`e` with its one table written as a linear term and one pinned value, where the table's
    values but the first (or but the last) keep one step (three values at least), else None.
    Only a table alone (with a constant): the pinned value replaces the whole expression in its
    copy, so no other variable's term may be in it. Any three values fit both readings; the one
    with the smaller step is taken (`[23,25,26]`: `24+i!23`; `[13,17,1]`: `13+i*4!2:1`)."""
    if len(e.tables) != 1 or e.terms or e.shifts or e.pins:
        return None
    var, t = e.tables[0]
    n = len(t)
    if n < 3:
        return None
    first, last = _linear(t[1:]), _linear(t[:-1])
    if first and last:  # (three values)
        first, last = abs(t[2] - t[1]) < abs(t[1] - t[0]), abs(t[1] - t[0]) < abs(t[2] - t[1])
    if first:
        d = t[2] - t[1]
        return VarExpr(e.base + t[1] - d, ((var, d),) if d else (), (), (), ((var, 0, e.base + t[0]),))
    if last:
        d = t[1] - t[0]
        return VarExpr(e.base + t[0], ((var, d),) if d else (), (), (), ((var, n - 1, e.base + t[-1]),))
    return None


def _shorter(old, new) -> object:
    return new if count_tokens(fmt_operand(new)) < count_tokens(fmt_operand(old)) else old


def _op(o):
    t = type(o)
    if t is VarExpr:
        f = first_form(o)
        return o if f is None else _shorter(o, f)
    if t is VarReg:
        f = first_form(o.expr) if o.prefix[:1] == "%" else None  # (never a label's)
        return o if f is None else _shorter(o, VarReg(o.prefix, f))
    if t is Addr:
        base = _op(o.base) if o.base is not None else None
        off = _op(o.offset) if type(o.offset) is VarExpr else o.offset
        rest = tuple(_op(x) for x in o.rest)
        return Addr(base, off, o.op, rest, o.bracket)
    if t is Vec:
        return Vec(tuple(_op(x) for x in o.items))
    if t is Paren:
        return Paren(tuple(_op(x) for x in o.items))
    if t is Neg:
        return Neg(_op(o.operand))
    if t is Pipe:
        return Pipe(_op(o.left), _op(o.right))
    return o


def rewrite(stmts) -> list:
    """The statements with every table that fits first_form rewritten where that is shorter."""
    out = []
    for s in stmts:
        if type(s) is Loop or type(s) is Block:
            body = rewrite(s.body)
            if any(a is not b for a, b in zip(body, s.body)):  # (unchanged: the same object)
                s = Loop(s.var, s.start, s.limit, s.step, tuple(body)) if type(s) is Loop else Block(tuple(body))
        elif type(s) is Instr and _has_vars(s):
            ops = tuple(_op(o) for o in s.operands)
            g = _op(s.guard) if s.guard is not None else None
            if ops != s.operands or g != s.guard:
                s = Instr(s.opcode, s.mods, ops, g, s.line)
        out.append(s)
    return out


def _has_vars(s: Instr) -> bool:
    """Could the instruction hold a table (an operand or guard other than a plain one)?"""
    return any(type(o) not in _PLAIN for o in s.operands) or (s.guard is not None and type(s.guard) is VarExpr)

"""Tables that are linear but for copy 0, written as a linear term and a first value.

`%f[1,6,9,12]` is `%f3+i*3` in copies 1-3 and `%f1` in copy 0: `%f3+i*3!1` (syntax.VarExpr.firsts,
session 16). Copy 0 of an unrolled body differs from the model of the others where it reads
what the code before the loop left (an accumulator's first source: `%f[111,30,32,34]`), or
where nvcc numbered its registers before the copies' own (a `mov` only copy 0 has). A table
pays 2 tokens per copy for that one value; the first value pays 2 (3 when negative).

This is a rewrite of the output (reroll.reroll_stmts runs it last), so the search and its
scores are unchanged; expansion gives the same values (the function's check still runs).
"""

from __future__ import annotations

from .lexer import count_tokens
from .syntax import Addr, Block, Imm, Instr, Loop, Neg, Paren, Pipe, Reg, Sym, Vec, VarExpr, VarReg, fmt_operand

_PLAIN = frozenset({Reg, Imm, Sym})  # operands that never hold a table


def first_form(e: VarExpr) -> VarExpr | None:
    """`e` with its one table written as a linear term and a first value, where the table's
    values after the first keep one step (three values at least), else None. Only a table
    alone (with a constant): the first value replaces the whole expression where the
    variable is 0, so no other variable's term may be in it."""
    if len(e.tables) != 1 or e.terms or e.shifts or e.firsts:
        return None
    var, t = e.tables[0]
    if len(t) < 3:
        return None
    d = t[2] - t[1]
    if any(b - a != d for a, b in zip(t[1:], t[2:])):
        return None
    if len(t) == 3 and abs(d) >= abs(t[1] - t[0]):
        # three values always fit: read as the last one off (`[13,17,1]`, a chain's result in a
        # low register) where that step is the smaller, and left a table
        return None
    return VarExpr(e.base + t[1] - d, ((var, d),) if d else (), (), (), ((var, e.base + t[0]),))


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

"""Expand Rolled-PTX back to plain PTX: the exact inverse of `reroll`.

Every `for` loop is unrolled and every VarExpr / VarReg evaluated. One printing
rule makes address offsets lossless: a bracketed offset that evaluates to 0 is
printed as no offset (`[%r8]`), because the rerolling only ever puts a VarExpr
where the original wrote either no offset or a non-zero one (an explicit `+0`
is kept as a constant and never becomes a VarExpr).

A VarExpr where a guard predicate would be is a presence guard (presence.py): the
statement is emitted, unguarded, in the copies where it evaluates above 0.
"""

from __future__ import annotations

from functools import lru_cache

from .parser import parse_module
from .syntax import (Addr, Block, Function, Imm, ImmTable, Instr, Label, Loop, Module, Neg, Paren,
                     Pipe, Reg, Stmt, Sym, Vec, VarExpr, VarReg, fmt_module)


_LEAVES = frozenset({Reg, Imm, Sym})  # operands that never hold a loop variable


class ExpandError(ValueError):
    """Rolled-PTX that cannot be expanded (unbound variable, negative register or shift)."""


def _at(where: "Instr | str") -> str:
    """Where an error is, for its message: the instruction's line (or opcode), or a label."""
    if isinstance(where, Instr):
        return f"line {where.line}" if where.line else where.opcode
    return where


def _val(e: VarExpr, env: dict[str, int], where: "Instr | str") -> int:
    try:
        return e.eval(env)
    except KeyError as exc:
        raise ExpandError(f"{_at(where)}: loop variable {exc.args[0]!r} is not bound") from None
    except ValueError as exc:  # a geometric term shifted by a negative loop variable
        raise ExpandError(f"{_at(where)}: {e}: {exc}") from None


@lru_cache(maxsize=1 << 16)
def _named(prefix: str, v: int):
    """The register or label `prefix` v: one object per name (operands are frozen), not one
    per expanded copy (a frozen dataclass is slow to make; the round-trip check of every
    rerolled function expands all its loops, session 21)."""
    return Reg(f"{prefix}{v}") if prefix.startswith("%") else Sym(f"{prefix}{v}")


@lru_cache(maxsize=1 << 16)
def _imm(v: int) -> Imm:
    return Imm(str(v))


def _sub(o, env: dict[str, int], where: "Instr | str"):
    if type(o) in _LEAVES:  # most operands: nothing to substitute
        return o
    if isinstance(o, VarReg):
        v = _val(o.expr, env, where)
        if v < 0:
            raise ExpandError(f"{_at(where)}: register {o.prefix}({o.expr}) evaluates to {v}")
        return _named(o.prefix, v)
    if isinstance(o, Addr):  # (before the rarer kinds: memory operands are common)
        off = o.offset
        if isinstance(off, VarExpr):
            v = _val(off, env, where)
            off = None if (v == 0 and o.bracket) else _imm(v)
        base = _sub(o.base, env, where) if o.base is not None else None
        rest = tuple([_sub(x, env, where) for x in o.rest]) if o.rest else ()
        return Addr(base, off, o.op, rest, o.bracket)
    if isinstance(o, VarExpr):
        return _imm(_val(o, env, where))
    if isinstance(o, ImmTable):
        t = env.get(o.var)
        if t is None:
            raise ExpandError(f"{_at(where)}: loop variable {o.var!r} is not bound")
        if not 0 <= t < len(o.items):
            raise ExpandError(f"{_at(where)}: table of {len(o.items)} literals indexed by {o.var} = {t}")
        return Imm(o.items[t])
    if isinstance(o, Neg):
        return Neg(_sub(o.operand, env, where))
    if isinstance(o, Vec):
        return Vec(tuple([_sub(x, env, where) for x in o.items]))
    if isinstance(o, Paren):
        return Paren(tuple(_sub(x, env, where) for x in o.items))
    if isinstance(o, Pipe):
        return Pipe(_sub(o.left, env, where), _sub(o.right, env, where))
    return o


def expand_stmts(stmts, env: dict[str, int] | None = None) -> list[Stmt]:
    env = env or {}
    out: list[Stmt] = []
    for s in stmts:
        if isinstance(s, Loop):
            for v in range(s.start, s.limit, s.step):
                out.extend(expand_stmts(s.body, {**env, s.var: v}))
        elif isinstance(s, Instr):
            if type(s.guard) is VarExpr:  # a presence guard (presence.py): in the copies where > 0
                if _val(s.guard, env, s) <= 0:
                    continue
                s = Instr(s.opcode, s.mods, s.operands, None, s.line)
            if env or _has_var(s):
                g = _sub(s.guard, env, s) if s.guard is not None else None  # (s: where, for errors)
                s = Instr(s.opcode, s.mods, tuple([_sub(o, env, s) for o in s.operands]), g, s.line)
            out.append(s)
        elif isinstance(s, Block):
            out.append(Block(tuple(expand_stmts(s.body, env))))
        elif isinstance(s, Label) and s.expr is not None:
            out.append(Label(f"{s.name}{_val(s.expr, env, s.name)}"))
        else:
            out.append(s)
    return out


def _has_var(s: Instr) -> bool:
    # cheap test: plain PTX never holds VarExpr/VarReg nodes
    for o in s.operands:
        if type(o) not in _LEAVES and _op_has_var(o):
            return True
    return s.guard is not None and _op_has_var(s.guard)


def _op_has_var(o) -> bool:
    if isinstance(o, (VarExpr, VarReg, ImmTable)):
        return True
    if isinstance(o, (Vec, Paren)):
        return any(_op_has_var(x) for x in o.items)
    if isinstance(o, Neg):
        return _op_has_var(o.operand)
    if isinstance(o, Pipe):
        return _op_has_var(o.left) or _op_has_var(o.right)
    if isinstance(o, Addr):
        return (isinstance(o.offset, VarExpr) or (o.base is not None and _op_has_var(o.base))
                or any(_op_has_var(x) for x in o.rest))
    return False


def expand_function(f: Function) -> Function:
    if f.body is None:
        return f
    return Function(f.kind, f.name, f.pre, f.ret, f.params, f.post,
                    tuple(expand_stmts(f.body)), f.line)


def expand_module(m: Module) -> Module:
    return Module(tuple(expand_function(x) if isinstance(x, Function) else x for x in m.items))


def expand_text(text: str, source: str = "<rolled-ptx>") -> str:
    """Rolled-PTX text -> plain PTX text."""
    return fmt_module(expand_module(parse_module(text, source)))

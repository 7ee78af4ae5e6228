"""Structure over a parsed module: basic blocks, per-kernel split, debug-info removal."""

from __future__ import annotations

from dataclasses import dataclass

from .syntax import (Addr, Block, Comment, Directive, Function, Instr, Label, Loop, Module,
                     Neg, Paren, Pipe, Stmt, Sym, Vec)

_TERMINATORS = {"bra", "brx", "ret", "exit", "trap"}


@dataclass
class BasicBlock:
    label: str | None
    stmts: list[Stmt]


def basic_blocks(f: Function) -> list[BasicBlock]:
    """Split a function body at labels and after branches/returns."""
    out: list[BasicBlock] = [BasicBlock(None, [])]
    for s in f.body or ():
        if isinstance(s, Label):
            out.append(BasicBlock(s.name, []))
            continue
        out[-1].stmts.append(s)
        if isinstance(s, Instr) and s.opcode in _TERMINATORS:
            out.append(BasicBlock(None, []))
    return [b for b in out if b.stmts or b.label is not None]


def _symbols(o, acc: set[str]) -> None:
    if isinstance(o, Sym):
        acc.add(o.name)
    elif isinstance(o, (Vec, Paren)):
        for x in o.items:
            _symbols(x, acc)
    elif isinstance(o, Neg):
        _symbols(o.operand, acc)
    elif isinstance(o, Pipe):
        _symbols(o.left, acc), _symbols(o.right, acc)
    elif isinstance(o, Addr):
        if o.base is not None:
            _symbols(o.base, acc)
        for x in o.rest:
            _symbols(x, acc)


def referenced_symbols(stmts) -> set[str]:
    acc: set[str] = set()
    for s in stmts:
        if isinstance(s, Instr):
            for o in s.operands:
                _symbols(o, acc)
        elif isinstance(s, (Block, Loop)):
            acc |= referenced_symbols(s.body)
        elif isinstance(s, Directive):  # e.g. branch target tables
            acc |= {t for t, _ in s.tokens}
    return acc


def _strip_body(stmts, used: set[str]) -> tuple:
    out = []
    for s in stmts:
        if isinstance(s, Directive) and s.name in (".loc", ".file"):
            continue
        if isinstance(s, Label) and s.name not in used:
            continue  # debug labels ($L__tmp0, $L__func_begin0) split basic blocks
        if isinstance(s, Comment):
            continue
        if isinstance(s, Block):
            s = Block(_strip_body(s.body, used))
        out.append(s)
    return tuple(out)


def strip_debug(m: Module) -> Module:
    """Drop `.loc`/`.file`, debug `.section`s, comments and unreferenced labels."""
    items = []
    for it in m.items:
        if isinstance(it, Comment):
            continue
        if isinstance(it, Directive) and (it.name in (".loc", ".file") or (
                it.name == ".section" and len(it.tokens) > 1 and it.tokens[1][0].startswith(".debug"))):
            continue
        if isinstance(it, Function) and it.body is not None:
            used = referenced_symbols(it.body)
            it = Function(it.kind, it.name, it.pre, it.ret, it.params, it.post,
                          _strip_body(it.body, used), it.line)
        items.append(it)
    return Module(tuple(items))


def split_kernels(m: Module) -> dict[str, Module]:
    """One module per `.entry`: the shared directives and variables, the entry,
    and the `.func`s it calls (transitively)."""
    funcs = {f.name: f for f in m.functions if f.body is not None}
    out: dict[str, Module] = {}
    for f in m.functions:
        if f.kind != ".entry" or f.body is None:
            continue
        need, todo = {f.name}, [f]
        while todo:
            for name in referenced_symbols(todo.pop().body) & funcs.keys():
                if name not in need:
                    need.add(name)
                    todo.append(funcs[name])
        items = [it for it in m.items
                 if not isinstance(it, Function) or it.name in need or it.body is None]
        out[f.name] = Module(tuple(items))
    return out

"""Numeric holes of a statement and how they progress from copy to copy.

A statement is split into a *skeleton* (its text with every numeric hole
blanked: register numbers, decimal immediates, address offsets, numbered labels,
and the bases of existing VarExprs) and the tuple of hole values. Copies of an
unrolled body share the skeleton; each hole follows a *model* in the copy index
t, and the template writes the model as a VarExpr:

- ("lin", d):    v_t = v_0 + t*d                  -> `v0+i*d` (the paper's Offset)
- ("shr", b, m, k): v_t = b + sign(m)*(|m| >> k*t)  -> `b+(m>>i*k)` (halving: tree
  reductions, shuffle ladders; floor semantics, so 511, 255, ..., 1, 0 is `(511>>i)`)
- ("shl", b, m, k): v_t = b + sign(m)*(|m| << k*t)  -> `b+(m<<i*k)` (doubling: scans)

Geometric models are tried only for immediates and offsets (never register
numbers or labels) and only when three copies disagree with a linear model.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .lexer import count_tokens
from .syntax import (Addr, Block, Imm, ImmTable, Instr, Label, Loop, Neg, Paren, Pipe, Reg, Stmt, Sym,
                     Vec, VarExpr, VarReg, fmt_varreg)

REGNUM = re.compile(r"^(%[A-Za-z_]+?)(0|[1-9]\d*)$")
# compiler-made labels: numbered, so an unrolled body with branches rolls too
LABELNUM = re.compile(r"^(\$L\w*?_)(0|[1-9]\d*)$")
# kernel parameters (`_Z3fooPfi_param_2`): every kernel loads its parameters one by one, so
# runs of `ld.param.u64 %rdN, [k_param_M]` roll too. Written long (`k_param_(2+i)`): inside
# brackets `k_param_2+i` would read as an address offset. No leading zeros, so the name is
# prefix + str(value) exactly.
PARAMNUM = re.compile(r"^([A-Za-z_$][\w$]*_param_)(0|[1-9]\d*)$")
SYM_KINDS = ("sym", "psym")
# hex-float literals as nvcc prints them (upper-case digits, full width), so that the text is
# exactly prefix + the value's digits: `0f3F800000` (f32), `0d3FF0000000000000` (f64)
FLOATHEX = re.compile(r"^0(?:f[0-9A-F]{8}|d[0-9A-F]{16})$")
GEOMETRIC_KINDS = frozenset({"imm", "vimm", "off", "off0"})


def map_op(o, f):
    """Rebuild operand `o`, passing each numeric hole to f(kind, node) -> node."""
    t = type(o)  # (the node types have no subclasses: `is` instead of isinstance chains)
    if t is Reg:
        return f("reg", o) if REGNUM.match(o.name) else o
    if t is Addr:
        base = map_op(o.base, f) if o.base is not None else None
        off = o.offset
        # an explicit `+0` stays a constant: expand prints a 0-valued hole as no offset
        if o.op == "+" and (isinstance(off, VarExpr)
                            or (off is None and o.bracket)
                            or (isinstance(off, Imm) and off.is_dec and off.text != "0")):
            off = f("off0" if off is None else "off", off)
        return Addr(base, off, o.op, tuple(map_op(x, f) for x in o.rest), o.bracket)
    if t is Imm:
        return f("imm", o) if o.is_dec else f("fimm", o) if FLOATHEX.match(o.text) else o
    if t is Sym:
        return (f("sym", o) if LABELNUM.match(o.name) else
                f("psym", o) if PARAMNUM.match(o.name) else o)
    if t is VarReg:
        return f("vreg", o)
    if t is VarExpr:
        return f("vimm", o)
    if t is Vec:
        return Vec(tuple(map_op(x, f) for x in o.items))
    if t is Neg:
        return Neg(map_op(o.operand, f))
    if t is Paren:
        return Paren(tuple(map_op(x, f) for x in o.items))
    if t is Pipe:
        return Pipe(map_op(o.left, f), map_op(o.right, f))
    return o


def map_stmt(s: Stmt, f) -> Stmt:
    if isinstance(s, Instr):
        g = map_op(s.guard, f) if s.guard is not None else None
        return Instr(s.opcode, s.mods, tuple(map_op(o, f) for o in s.operands), g, s.line)
    if isinstance(s, Loop):
        return Loop(s.var, s.start, s.limit, s.step, tuple(map_stmt(b, f) for b in s.body))
    if isinstance(s, Block):  # inline-asm scopes `{ cvt.rn.f16.f32 %rs1, %f1; }`
        return Block(tuple(map_stmt(b, f) for b in s.body))
    if isinstance(s, Label):
        r = map_op(Sym(s.name) if s.expr is None else VarReg(s.name, s.expr), f)
        # (a skeleton blanks a VarReg label to a Reg: only its repr is used)
        return Label(r.prefix, r.expr) if isinstance(r, VarReg) else Label(r.name)
    return s


def _symnum(name: str):
    return LABELNUM.match(name) or PARAMNUM.match(name)


def hole_value(node) -> int:
    if node is None:
        return 0
    if isinstance(node, Reg):
        return int(REGNUM.match(node.name).group(2))
    if isinstance(node, Sym):
        return int(_symnum(node.name).group(2))
    if isinstance(node, VarReg):
        return vreg_value(node)
    if isinstance(node, VarExpr):
        return node.base
    if FLOATHEX.match(node.text):
        return int(node.text[2:], 16)
    return int(node.text)


def shape(node) -> tuple:
    """The loop-variable part of a hole (part of the skeleton, shared by copies). A register's
    tables less their least value (vreg_value adds those to its number): inner loops that
    differ only by a register offset, `%f[161,178,187]` and `%f[205,222,231]`, share the
    skeleton `%f(N+[0,17,26])`, and fold into an outer loop (`%f(161+j*44+[0,17,26])`,
    session 15), as `%f161+i` and `%f205+i` fold."""
    e = node.expr if isinstance(node, VarReg) else node
    if not isinstance(e, VarExpr):
        return (), (), ()
    tabs = tuple((v, tuple(x - min(t) for x in t)) for v, t in e.tables) if e.tables else ()
    if e.pins:  # (kept whole, after the tables: `%f(3+i*3!1)` and `%f(9+i*3!1)` fold, `!2` does not)
        tabs += tuple(("!",) + x for x in e.pins)
    return e.terms, e.shifts, tabs


def unshape(tables: tuple) -> tuple[tuple, tuple]:
    """A shape's third part as (tables, pinned values) again (shape puts both there)."""
    if not tables or tables[-1][0] != "!":
        return tables, ()
    return tuple(t for t in tables if t[0] != "!"), tuple(t[1:] for t in tables if t[0] == "!")


def vreg_value(node) -> int:
    """The number of a hole written as an expression (a register, a label, an immediate, an
    offset): its base, plus the least value of each of its tables (shape leaves those out)."""
    e = node.expr if isinstance(node, VarReg) else node
    return e.base + sum(min(t) for _, t in e.tables) if e.tables else e.base


_NO_SHAPE = ((), (), ())


def split(s: Stmt) -> tuple[object, tuple[int, ...], tuple[str, ...], tuple[tuple, ...]]:
    """(skeleton key, hole values, hole kinds, hole shapes) of one statement.

    The key is a hashable value that two statements share exactly when their texts with
    every hole blanked are the same: the statement with each hole (map_op's kinds, in
    map_op's order) replaced by its kind and the part of it that is no number (a register's
    prefix, a VarExpr's loop-variable shape). One walk, no syntax nodes made (issue 44:
    the split was a fifth of a reroll when it rebuilt the statement and printed its repr)."""
    vals: list[int] = []
    kinds: list[str] = []
    shapes: list[tuple] = []
    key = _skel_stmt(s, (vals, kinds, shapes))
    return key, tuple(vals), tuple(kinds), tuple(shapes)


def _skel_stmt(s: Stmt, out: tuple) -> object:
    t = type(s)
    if t is Instr:
        g = None if s.guard is None else _skel_op(s.guard, out)
        return ("I", s.opcode, s.mods, g, tuple([_skel_op(o, out) for o in s.operands]))
    if t is Loop:
        return ("F", s.var, s.start, s.limit, s.step, tuple([_skel_stmt(b, out) for b in s.body]))
    if t is Block:
        return ("B", tuple([_skel_stmt(b, out) for b in s.body]))
    if t is Label:
        return ("L", _skel_op(Sym(s.name) if s.expr is None else VarReg(s.name, s.expr), out))
    return s  # directives, comments: the statement itself


def _hole(out: tuple, v: int, kind: str, sh: tuple = _NO_SHAPE) -> None:
    out[0].append(v)
    out[1].append(kind)
    out[2].append(sh)


@lru_cache(maxsize=1 << 16)
def _reg_parts(name: str) -> tuple | None:
    """A register name's part of a skeleton key and its number (None: no number). Read once
    per name: the parse shares one object per operand text, and a unit names each register
    many times (a regex match per register was a sixth of the split, session 21)."""
    m = REGNUM.match(name)
    return None if m is None else (("reg", m.group(1)), int(m.group(2)))


@lru_cache(maxsize=1 << 16)
def _sym_parts(name: str) -> tuple | None:
    """A label's or parameter's part of a skeleton key, its number and kind (None: no number)."""
    m, kind = LABELNUM.match(name), "sym"
    if m is None:
        m, kind = PARAMNUM.match(name), "psym"
        if m is None:
            return None
    return ("s", m.group(1)), int(m.group(2)), kind  # labels and parameters never share a prefix


def _skel_op(o, out: tuple) -> object:
    """map_op's walk of one operand: its part of the skeleton key; holes go to `out`."""
    t = type(o)
    if t is Reg:
        e = _reg_parts(o.name)
        if e is None:
            return o
        _hole(out, e[1], "reg")
        return e[0]
    if t is Imm:
        if o.is_dec:
            _hole(out, int(o.text), "imm")
            return ("i", _NO_SHAPE)
        if FLOATHEX.match(o.text):
            _hole(out, int(o.text[2:], 16), "fimm")
            return ("f", o.text[:2])
        return o
    if t is Addr:
        base = None if o.base is None else _skel_op(o.base, out)
        off = o.offset
        if o.op == "+" and (isinstance(off, VarExpr) or (off is None and o.bracket)
                            or (isinstance(off, Imm) and off.is_dec and off.text != "0")):
            if off is None:
                _hole(out, 0, "off0")
                off = ("o", _NO_SHAPE)
            elif type(off) is Imm:
                _hole(out, int(off.text), "off")
                off = ("o", _NO_SHAPE)
            else:
                sh = shape(off)
                # "itab": an expression with a table (its linear term costs its base too)
                _hole(out, vreg_value(off), "itab" if off.tables else "off", sh)
                off = ("o", sh)
        rest = tuple([_skel_op(x, out) for x in o.rest]) if o.rest else ()
        return ("A", base, off, o.op, rest, o.bracket)
    if t is Sym:
        e = _sym_parts(o.name)
        if e is None:
            return o
        _hole(out, e[1], e[2])
        return e[0]
    if t is VarReg:
        sh = shape(o)
        # "vtab": a register with a table, whose linear term costs its parentheses too
        _hole(out, vreg_value(o), "vtab" if o.expr.tables else "vreg", sh)
        return ("v", o.prefix, sh)
    if t is VarExpr:
        sh = shape(o)
        _hole(out, vreg_value(o), "itab" if o.tables else "vimm", sh)
        return ("i", sh)
    if t is Vec:
        return ("V", tuple([_skel_op(x, out) for x in o.items]))
    if t is Neg:
        return ("N", _skel_op(o.operand, out))
    if t is Paren:
        return ("P", tuple([_skel_op(x, out) for x in o.items]))
    if t is Pipe:
        return ("|", _skel_op(o.left, out), _skel_op(o.right, out))
    return o


# --- models ---------------------------------------------------------------------
def predict(model: tuple, v0: int, t: int) -> int:
    if model[0] == "lin":
        return v0 + t * model[1]
    if model[0] == "tab":
        return model[1][t]
    kind, b, m, k = model
    g = abs(m) >> (t * k) if kind == "shr" else abs(m) << (t * k)
    return b + (g if m >= 0 else -g)


def _log2(x: int) -> int:
    """k when x == 2**k (k >= 1), else 0."""
    return x.bit_length() - 1 if x > 1 and x & (x - 1) == 0 else 0


def fit(kind: str, v0: int, v1: int, v2: int | None) -> tuple:
    """The model of a hole from its values in copies 0, 1 and (if known) 2."""
    lin = ("lin", v1 - v0)
    if v2 is None or v2 - v1 == v1 - v0 or kind not in GEOMETRIC_KINDS:
        return lin
    tries = []
    if v0 and (v1 == 0 or (v0 > 0) == (v1 > 0)):  # `(511>>i)`: no base, cheapest to print
        k = max(1, abs(v0).bit_length() - abs(v1).bit_length())
        tries.append(("shr", 0, v0, k))
    d0, d1 = v1 - v0, v2 - v1
    if d0 and d1 and d0 % d1 == 0 and (k := _log2(d0 // d1)):  # halving by 2**k
        r = 1 << k
        if (d0 * r) % (r - 1) == 0:
            m = -(d0 * r) // (r - 1)
            tries.append(("shr", v0 - m, m, k))
    if d0 and d1 and d1 % d0 == 0 and (k := _log2(d1 // d0)):  # doubling by 2**k
        r = 1 << k
        if d0 % (r - 1) == 0:
            m = d0 // (r - 1)
            tries.append(("shl", v0 - m, m, k))
    for m in tries:
        if m[2] and all(predict(m, v0, t) == v for t, v in ((0, v0), (1, v1), (2, v2))):
            return m
    return lin


def linear_cost(kind: str, d: int) -> int:
    """Extra tokens of a linear term `+i*d` on a hole (format 2): `%r7` -> `%r7+i*4`,
    `16` -> `16+i*16`; 2 fewer when d is 1 or -1 (`+i`). `[%r8]` also gains `+0`."""
    if d == 0:
        return 0
    if kind == "psym":  # `k_param_2` -> `k_param_(2+i)`: the parentheses and the term
        return 5 if d in (1, -1) else 7
    if kind == "vtab":  # `%f[161,178]` -> `%f(161+j*44+[0,17])`: `(`, the base, `+`, `)` too
        return (2 if d in (1, -1) else 4) + 4
    if kind == "itab":  # `[16,48]` -> `16+j*64+[0,32]`: the base and its `+` too
        return (2 if d in (1, -1) else 4) + 2
    return (2 if d in (1, -1) else 4) + (2 if kind == "off0" else 0)


def cost(kind: str, v0: int, model: tuple, node_shape: tuple) -> int:
    """Extra tokens the template's VarExpr costs over the plain hole of copy 0."""
    if model == ("lin", 0):
        return 0
    if model[0] == "lin":
        return linear_cost(kind, model[1])
    if model[0] == "tab" and node_shape == ((), (), ()):
        return table_cost(kind, v0, model[1])
    # geometric, or a table on a hole that already has terms: rare, so count exactly
    terms, shifts, tables = node_shape
    tables, pins = unshape(tables)
    if model[0] == "tab":
        e = VarExpr(0, terms, shifts, tables + (("i", model[1]),), pins)
    else:
        op, b, m, k = model
        e = VarExpr(b, terms, shifts + ((m, ">>", "i", k),), tables, pins)
    old = VarExpr(v0, terms, shifts, tables, pins)
    if kind in ("reg", "sym", "psym", "vreg", "vtab"):  # `%r7` / `%r7+j` -> `%r(...)`
        new = fmt_varreg(VarReg("%r", e)) if kind in ("reg", "vreg", "vtab") else f"%r({e})"
        return count_tokens(new) - count_tokens(fmt_varreg(VarReg("%r", old)) if kind in ("vreg", "vtab") else "%r1")
    if kind == "off0":
        return count_tokens(str(e)) + 1  # `[%r3]` -> `[%r3+(...)]`
    return count_tokens(str(e)) - count_tokens(str(old) if kind in ("vimm", "itab") else str(v0))


# The tokens a table term is *scored* at, over what it prints (session 15). Tables print short
# since session 15: no index where it is `i` (`[8,4,2,1]`, syntax.table_index), no parentheses
# on a register (`%r[45,48,51]`, syntax.fmt_varreg): 3 tokens less, 5 on a register. Scored at
# their printed length, the plans took more table loops, some of which win a first pass and
# block the folds of the next (depthwise_conv_k3_kernel, tuning split: 3794 -> 4732 tokens);
# scored at their length before (these biases), the plans choose the loops they chose, and the
# loops print shorter (3616 tokens). The search's scores of table loops are therefore this
# much below what they save; what is kept is decided on the printed text.
TABLE_BIAS = 3       # the index `[i]` no longer written
REG_TABLE_BIAS = 2   # and a register's parentheses


def table_cost(kind: str, v0: int, vals) -> int:
    """Extra tokens a table `[v0,v1,...]` is scored at over the plain hole of copy 0 (format 2):
    2 per value (a comma or `]`, one more for a minus), `[`, and TABLE_BIAS; a register
    (`%r[45,48]`) REG_TABLE_BIAS more, a label or parameter (`$L__BB0_([3,5])`) its `(`, `)`,
    an absent offset `+`."""
    n = 2 * len(vals) + 1 + TABLE_BIAS + sum(v < 0 for v in vals)
    if kind == "reg":
        return n + REG_TABLE_BIAS
    if kind in ("sym", "psym"):
        return n + 2
    if kind == "off0":
        return n + 1
    return n - (2 if v0 < 0 else 1)


def template(s: Stmt, base: tuple[int, ...], models: tuple[tuple, ...], var: str) -> Stmt:
    """Copy 0 of a body statement with each varying hole written in `var`."""
    it = iter(zip(base, models))

    def rec(kind, node):
        v0, model = next(it)
        if model == ("lin", 0):
            return node
        if kind == "fimm":  # a table of literals, or (never offered) unchanged: the loop's check rejects it
            if model[0] != "tab":
                return node
            w = len(node.text) - 2
            return ImmTable(var, tuple(f"{node.text[:2]}{v:0{w}X}" for v in model[1]))
        terms, shifts, tables = shape(node)
        tables, pins = unshape(tables)
        if model[0] == "lin":
            expr = VarExpr(v0, terms + ((var, model[1]),), shifts, tables, pins)
        elif model[0] == "tab":  # the hole's value in each copy
            expr = VarExpr(0, terms, shifts, tables + ((var, tuple(model[1])),), pins)
        elif model[0] == "first":  # copies 1.. linear, copy 0 its own value (session 16)
            expr = VarExpr(model[2], terms + ((var, model[1]),) if model[1] else terms, shifts, tables,
                           pins + ((var, 0, v0),))
        elif model[0] == "last":  # ("last", d, t, value): linear from copy 0 but for copy t
            expr = VarExpr(v0, terms + ((var, model[1]),) if model[1] else terms, shifts, tables,
                           pins + ((var, model[2], model[3]),))
        else:
            op, b, m, k = model
            expr = VarExpr(b, terms, shifts + ((m, ">>" if op == "shr" else "<<", var, k),), tables, pins)
        if kind in ("reg", "vreg", "sym", "psym"):
            prefix = (REGNUM.match(node.name).group(1) if kind == "reg" else
                      _symnum(node.name).group(1) if kind in SYM_KINDS else node.prefix)
            return VarReg(prefix, expr)
        return expr

    return map_stmt(s, rec)


def vars_in(stmts) -> set[str]:
    out: set[str] = set()

    def rec(kind, node):
        e = node.expr if isinstance(node, VarReg) else node
        if isinstance(e, VarExpr):
            out.update(e.vars)
        return node

    for s in stmts:
        if isinstance(s, Loop):
            out.add(s.var)
            out |= vars_in(s.body)
        else:
            map_stmt(s, rec)
    return out

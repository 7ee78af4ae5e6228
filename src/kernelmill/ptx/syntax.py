"""The PTX / Rolled-PTX syntax tree and its printer.

Operands, statements, functions and modules are small frozen dataclasses, so
statements can be compared and hashed (the rerolling works on whole statements).
Printing is canonical: `parse(print(m)) == m`, and printing a parsed file gives
back its tokens in order (whitespace normalised).

Rolled-PTX (SPEC.md section 3) adds: the `for` opcode with a `.size.N` modifier
and a `var in range(a, b, c):` operand (`Loop`), `VarExpr` (`Nat {+ Var*Nat}`;
we also allow a negative base and `- Var*Nat` terms, which nvcc's descending
offsets need, and geometric terms `(Nat>>var)` / `(Nat<<var*2)` for the halving
offsets of tree reductions and the doubling ones of scans) and `VarReg` (`%f(3+i*2)`).

Format 2 (docs/FORMATS.md), what the printer writes: `%f3+i*2` for that VarReg, `+i` for
`+i*1`, `range(n)` / `range(a, b)`, and table terms `[v0,v1,...][i]` for holes that
follow no model. The parser reads both formats into the same trees.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Union


# --- operands -----------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Reg:
    name: str  # with the leading %, e.g. %rd12, %tid.x


@dataclass(frozen=True, slots=True)
class VarExpr:
    """`Int {(+|-) var*Nat} {(+|-) (Nat>>var[*Nat]) | (Nat<<var[*Nat])}`.

    `terms` are the paper's linear Offsets; `shifts` are our geometric extension:
    `(2048>>i)` is 2048, 1024, 512, ... (floor division), `(1<<i*2)` is 1, 4, 16, ...
    Each shift is `(sign * magnitude, op, var, k)`, worth `sign * (magnitude op (var*k))`
    (C precedence: `*` binds tighter than the shift, so the text reads the same in C)."""

    base: int
    terms: tuple[tuple[str, int], ...] = ()  # (loop variable, coefficient)
    shifts: tuple[tuple[int, str, str, int], ...] = ()  # (signed magnitude, ">>" | "<<", var, k)
    tables: tuple[tuple[str, tuple[int, ...]], ...] = ()  # (loop variable, values): `[8,12,5][i]`
    # (loop variable, copy, value): the expression is `value` where the variable is `copy`,
    # a pinned value (session 16): `!value` where `i` is 0, `!3:value` where it is 3; another
    # variable is named, `!j=value`, `!j=3:value`. Copy 0 of an unrolled body often differs from the model the others
    # keep to (the register of an accumulator the loop reads before it writes one, a register
    # numbered before the copies' own), and the last copy of a chain writes the register the
    # code after reads. A table pays 2 tokens per copy for that; a pinned value 2 (4 with its copy).
    pins: tuple[tuple[str, int, int], ...] = ()

    def eval(self, env: dict[str, int]) -> int:
        for x, t, w in self.pins:
            if env[x] == t:
                return w
        v = self.base
        for x, c in self.terms:  # (a loop, not sum() over a generator: expand's hot path)
            v += env[x] * c
        for c, op, x, k in self.shifts:
            n = env[x] * k
            if n < 0:
                raise ValueError(f"shift by a negative amount ({x}*{k} = {n})")
            m = abs(c) >> n if op == ">>" else abs(c) << n
            v += m if c >= 0 else -m
        for x, vals in self.tables:
            t = env[x]
            if not 0 <= t < len(vals):
                raise ValueError(f"table of {len(vals)} values indexed by {x} = {t}")
            v += vals[t]
        return v

    def __str__(self) -> str:
        # the base is left out only before a leading positive shift or a table:
        # `(2048>>i)`, `[8,12,5][i]`
        lead = not self.terms and self.base == 0 and (
            (self.shifts and self.shifts[0][0] > 0) or (not self.shifts and self.tables))
        s = "" if lead else str(self.base)
        for v, c in self.terms:  # a coefficient of 1 is not printed: `+i`, `-i`
            s += ("+" if c >= 0 else "-") + v + (f"*{abs(c)}" if abs(c) != 1 else "")
        for c, op, v, k in self.shifts:
            sign = "" if not s else ("+" if c > 0 else "-")
            s += f"{sign}({abs(c)}{op}{v}" + (f"*{k})" if k != 1 else ")")
        for v, vals in self.tables:
            s += ("+" if s else "") + "[" + ",".join(map(str, vals)) + "]" + table_index(v, len(vals))
        for v, t, w in self.pins:  # `3+i*3!1`, `3+i*3!3:1`; another variable is named: `3+j*3!j=1`, `!j=3:1`
            s += "!" + ("" if v == DEFAULT_INDEX else f"{v}=") + (f"{t}:" if t else "") + str(w)
        return s

    @property
    def vars(self) -> set[str]:
        return ({v for v, _ in self.terms} | {s[2] for s in self.shifts} | {t[0] for t in self.tables}
                | {f[0] for f in self.pins})


# a table indexed by this variable is written without its index (session 15): `[8,4,2,1]` is
# `[8,4,2,1][i]`, as `range(4)` is `range(0, 4, 1)`. The innermost loop of a nest is built first
# and takes `i` (search._fresh_var), so most tables are indexed by it. Two values at least: a
# PTX address is never a list of decimals, but `[16]` is one (parser.at_table)
DEFAULT_INDEX = "i"


def table_index(var: str, n: int) -> str:
    """The index written after a table of n values: `[j]`, or nothing for DEFAULT_INDEX."""
    return "" if var == DEFAULT_INDEX and n >= 2 else f"[{var}]"


@dataclass(frozen=True, slots=True)
class VarReg:
    """`%f(3+i*2)`; with a label prefix (`$L__BB0_(2+i*2)`) it names a label."""

    prefix: str  # e.g. %f, $L__BB0_
    expr: VarExpr


@dataclass(frozen=True, slots=True)
class Imm:
    text: str  # as written: 42, -1, 0x1F, 0f3F800000, 0d..., 1.5

    @property
    def is_dec(self) -> bool:
        # canonical decimal only: str(int(text)) == text, so a hole can be re-printed
        t = self.text[1:] if self.text.startswith("-") else self.text
        return t.isdigit() and (t == "0" or not t.startswith("0")) and self.text != "-0"


@dataclass(frozen=True, slots=True)
class Sym:
    name: str  # labels, variables, params, `_`


@dataclass(frozen=True, slots=True)
class Neg:
    operand: "Operand"  # !%p1


@dataclass(frozen=True, slots=True)
class Vec:
    items: tuple["Operand", ...]  # {%f1, %f2}


@dataclass(frozen=True, slots=True)
class Paren:
    items: tuple["Operand", ...]  # (param0, param1) in call


@dataclass(frozen=True, slots=True)
class Pipe:
    left: "Operand"
    right: "Operand"  # %p1|%p2


@dataclass(frozen=True, slots=True)
class Addr:
    """`[base+offset, rest...]`, or `sym+offset` when not bracketed.

    `offset` is None when absent; `op` is the operator as written (nvcc writes
    negative offsets as `+-4`)."""

    base: "Operand | None"
    offset: "Imm | VarExpr | None" = None
    op: str = "+"
    rest: tuple["Operand", ...] = ()
    bracket: bool = True


@dataclass(frozen=True, slots=True)
class ImmTable:
    """`[0f3C23D70A,0fBCA3D70A][i]`: one hex-float literal per loop copy (Rolled-PTX, issue 44).

    Unrolled FIR taps, constant conv weights and thresholds differ from copy to copy only
    in a float literal. A float's bits follow no useful integer model, and a VarExpr
    evaluates to a decimal integer, so such literals roll only as a table of their texts."""

    var: str
    items: tuple[str, ...]


Operand = Union[Reg, VarReg, Imm, VarExpr, Sym, Neg, Vec, Paren, Pipe, Addr, ImmTable]


# --- statements ---------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Instr:
    opcode: str
    mods: tuple[str, ...] = ()
    operands: tuple[Operand, ...] = ()
    guard: Operand | None = None  # @%p1 / @!%p1
    line: int = field(default=0, compare=False, hash=False, repr=False)


@dataclass(frozen=True, slots=True)
class Label:
    name: str  # the prefix when `expr` is set: `$L__BB0_(2+i*2):` (Rolled-PTX)
    expr: "VarExpr | None" = None


@dataclass(frozen=True, slots=True)
class Directive:
    """Any directive kept as tokens: `.reg .f32 %f<4>;`, `.loc 1 2 3`, ..."""

    tokens: tuple[tuple[str, bool], ...]  # (text, glued to previous)
    semicolon: bool = True

    @property
    def name(self) -> str:
        return self.tokens[0][0] if self.tokens else ""


@dataclass(frozen=True, slots=True)
class Comment:
    text: str


@dataclass(frozen=True, slots=True)
class Block:
    body: tuple["Stmt", ...]  # a nested `{ ... }` scope


@dataclass(frozen=True, slots=True)
class Loop:
    """Rolled-PTX loop: `for.size.N var in range(start, limit, step):` + body."""

    var: str
    start: int
    limit: int
    step: int
    body: tuple["Stmt", ...]

    @property
    def trip(self) -> int:
        return len(range(self.start, self.limit, self.step))

    @property
    def size(self) -> int:
        return sum(1 + s.size if isinstance(s, Loop) else 1 for s in self.body)


Stmt = Union[Instr, Label, Directive, Comment, Block, Loop]


def with_body(old: "Block | Loop", body) -> "Block | Loop":
    """`old` with `body` (a Block or a Loop), or `old` itself when every statement of `body`
    is the one already there: what a reroll knows of it (by identity) then still holds."""
    body = tuple(body)
    if len(body) == len(old.body) and all(a is b for a, b in zip(body, old.body)):
        return old
    return Block(body) if isinstance(old, Block) else Loop(old.var, old.start, old.limit, old.step, body)


def map_segments(stmts, roll, barrier, free: tuple = (), shortest: int = 4) -> list:
    """`stmts` with each straight-line segment (the statements between two barriers, when
    there are at least `shortest`) replaced by `roll(segment, free)`, and the body of each
    scope and loop mapped the same way first, a loop's variable added to `free` inside it.
    The walk the reroll's passes share (reroll._roll_stream, whole_statements.roll_stream)."""
    out: list = []
    seg: list = []
    for s in stmts:
        if isinstance(s, Block):  # a scope is one statement of the stream
            seg.append(with_body(s, map_segments(s.body, roll, barrier, free, shortest)))
        elif isinstance(s, Loop):  # folds as one statement; its body is mapped too
            seg.append(with_body(s, map_segments(s.body, roll, barrier, free + (s.var,), shortest)))
        elif barrier(s):
            out.extend(roll(seg, free) if len(seg) >= shortest else seg)
            seg = []
            out.append(s)
        else:
            seg.append(s)
    out.extend(roll(seg, free) if len(seg) >= shortest else seg)
    return out


@dataclass(frozen=True)
class Function:
    kind: str                   # .entry | .func
    name: str
    pre: tuple[tuple[str, bool], ...]        # linkage etc. before .entry/.func
    ret: tuple[tuple[tuple[str, bool], ...], ...] | None  # .func return params
    params: tuple[tuple[tuple[str, bool], ...], ...] | None
    post: tuple[tuple[str, bool], ...]       # .maxntid 256, 1, 1 ...
    body: tuple[Stmt, ...] | None            # None: a declaration ending in ;
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Module:
    items: tuple[Union[Directive, Comment, Function], ...]

    @property
    def functions(self) -> list[Function]:
        return [f for f in self.items if isinstance(f, Function)]


# --- printing -----------------------------------------------------------------
def fmt_operand(o: Operand) -> str:
    if isinstance(o, Reg):
        return o.name
    if isinstance(o, (Imm,)):
        return o.text
    if isinstance(o, Sym):
        return o.name
    if isinstance(o, VarExpr):
        return str(o)
    if isinstance(o, VarReg):
        return fmt_varreg(o)
    if isinstance(o, Neg):
        return "!" + fmt_operand(o.operand)
    if isinstance(o, Vec):
        return "{" + ", ".join(map(fmt_operand, o.items)) + "}"
    if isinstance(o, Paren):
        return "(" + ", ".join(map(fmt_operand, o.items)) + ")"
    if isinstance(o, Pipe):
        return fmt_operand(o.left) + "|" + fmt_operand(o.right)
    if isinstance(o, Addr):
        s = fmt_operand(o.base) if o.base is not None else ""
        if o.offset is not None:
            s += o.op + (o.offset.text if isinstance(o.offset, Imm) else str(o.offset))
        for r in o.rest:
            s += ", " + fmt_operand(r)
        return f"[{s}]" if o.bracket else s
    if isinstance(o, ImmTable):
        return "[" + ",".join(o.items) + "]" + table_index(o.var, len(o.items))
    raise TypeError(f"not an operand: {o!r}")


_REG_SPLIT = re.compile(r"^(%[A-Za-z_]+?|\$L\w*?_)(0|[1-9]\d*)$")


def fmt_varreg(o: VarReg) -> str:
    """`%f22+i*21` (format 2) where that reads back as the same VarReg, else `%f(22+i*21)`.

    The short form is the register of copy 0 with the linear terms after it; it is used
    when the expression has terms and no shifts and `prefix + base` splits back into the
    same prefix and number (registers `%[A-Za-z_]+N`, compiler labels `$L..._N`). A pinned
    value follows the terms: `%f3+i*3!1` (never on a label, whose `:` would follow `!3:1`)."""
    e = o.expr
    if e.terms and not e.shifts and not e.tables and e.base >= 0 and not (e.pins and o.prefix[:1] != "%"):
        name = f"{o.prefix}{e.base}"
        m = _REG_SPLIT.match(name)
        if m is not None and m.group(1) == o.prefix:
            return name + str(e)[len(str(e.base)):]
    if len(e.tables) == 1 and not e.terms and not e.shifts and e.base == 0 and o.prefix[:1] == "%":
        # a register that is one table alone (session 15): `%r[45,48,51][i]`, no parentheses;
        # PTX never has a `[` glued to a register, and the parser reads it back (parser.register).
        # One table only: in `[%rd[9,1][i]+[0,2][i]]` the second is the address's offset
        return o.prefix + str(e)
    return f"{o.prefix}({e})"


def fmt_tokens(tokens) -> str:
    out = []
    for text, glued in tokens:
        out.append(text if glued or not out else " " + text)
    return "".join(out)


def fmt_stmt(s: Stmt, depth: int = 1) -> list[str]:
    ind = "\t" * depth
    if isinstance(s, Instr):
        head = (f"@{fmt_operand(s.guard)} " if s.guard is not None else "") + s.opcode + "".join(s.mods)
        ops = ", ".join(map(fmt_operand, s.operands))
        return [f"{ind}{head}" + (f" \t{ops};" if ops else ";")]
    if isinstance(s, Label):
        return [f"{fmt_varreg(VarReg(s.name, s.expr))}:" if s.expr is not None else f"{s.name}:"]
    if isinstance(s, Directive):
        return [ind + fmt_tokens(s.tokens) + (";" if s.semicolon else "")]
    if isinstance(s, Comment):
        return [ind + s.text]
    if isinstance(s, Block):
        lines = [ind + "{"]
        for b in s.body:
            lines += fmt_stmt(b, depth + 1)
        return lines + [ind + "}"]
    if isinstance(s, Loop):
        lines = [f"{ind}for.size.{s.size} \t{s.var} in {fmt_range(s.start, s.limit, s.step)}:"]
        for b in s.body:
            lines += fmt_stmt(b, depth + 1)
        return lines
    raise TypeError(f"not a statement: {s!r}")


def fmt_range(start: int, limit: int, step: int) -> str:
    """`range(4)`, `range(1, 4)`, `range(0, 8, 2)`: Python's defaults are left out (format 2)."""
    if step != 1:
        return f"range({start}, {limit}, {step})"
    return f"range({limit})" if start == 0 else f"range({start}, {limit})"


def fmt_function(f: Function) -> str:
    head = fmt_tokens(f.pre + ((f.kind, False),))
    if f.ret is not None:
        head += " (" + ", ".join(fmt_tokens(p) for p in f.ret) + ")"
    head += " " + f.name
    if f.params is not None:
        inner = ",\n".join("\t" + fmt_tokens(p) for p in f.params)
        head += "(\n" + inner + "\n)" if f.params else "()"
    if f.post:
        head += "\n" + fmt_tokens(f.post)
    if f.body is None:
        return head + ";"
    lines = [head, "{"]
    for s in f.body:
        lines += fmt_stmt(s)
    return "\n".join(lines + ["}"])


def fmt_item(it) -> str:
    """One item of a module as `fmt_module` prints it (before the newline that joins them)."""
    if isinstance(it, Function):
        return fmt_function(it) + "\n"
    if isinstance(it, Directive):
        return fmt_tokens(it.tokens) + (";" if it.semicolon else "")
    return it.text


def fmt_module(m: Module) -> str:
    return fmt_parts([fmt_item(it) for it in m.items])


def fmt_parts(parts: list[str]) -> str:
    """A module's text from its items' texts (fmt_item)."""
    return "\n".join(parts) + "\n"


def fmt_stmts(stmts, depth: int = 1) -> str:
    return "\n".join(line for s in stmts for line in fmt_stmt(s, depth))

"""Recursive-descent parser for PTX modules and Rolled-PTX.

Grammar covered: top-level directives (`.version`, `.target`, variables,
`.section` blocks), `.entry`/`.func` definitions and declarations with return
and input parameters and performance directives, and function bodies made of
labels, directives, nested `{}` scopes, comments, and instructions: an optional
guard (`@%p1`, `@!%p1`), an opcode with its modifiers, and operands (registers,
vector groups, address expressions, immediates `0f...`/`0d...`/hex/decimal,
symbols, `a|b` predicate pairs, `(..)` call lists). Rolled-PTX adds the `for`
header, VarExpr (with our geometric `(Nat>>var)` terms) and VarReg. Every error
names source, line and column.

Linear time: a line that is one plain instruction (`@%p1 bra $L__BB0_2;`, the bulk
of an unrolled kernel) is read by `scan.py` in one step into a `stmt` token that
holds the parsed instruction; anything else is tokenized and parsed here. Where
a `stmt` token turns up outside a statement it is split back into its tokens,
so both paths give the same tree (tests/ptx/test_parse_speed.py checks that).
"""

from __future__ import annotations

import contextlib
import gc
import re
from bisect import bisect_right

from .lexer import PtxSyntaxError, Token, line_col, tokenize
from .scan import scan
from .syntax import (Addr, Block, Comment, Directive, Function, Imm, ImmTable, Instr, Label, Loop,
                     Module, Neg, Paren, Pipe, Reg, Stmt, Sym, Vec, VarExpr, VarReg)
from .syntax import DEFAULT_INDEX

# directives that end at the end of their line instead of at a semicolon
_LINE_DIRECTIVES = {".version", ".target", ".address_size", ".loc", ".file"}
_FUNC_PREFIX = {".visible", ".extern", ".weak", ".entry", ".func"}
_NUMERIC = ("dec", "hex", "float", "num")
# a register or compiler label of copy 0 before its terms: `%f22+i*21`, `$L__BB0_2+i*2`
_VARREG_SPLIT = re.compile(r"^(%[A-Za-z_]+?|\$L\w*?_)(0|[1-9]\d*)$")


@contextlib.contextmanager
def gc_paused():
    """A parse makes hundreds of thousands of objects and no reference cycle; the cyclic
    collector's passes over them cost ~15% of a parse of a 2 MB file (issue 44). Paused
    for the parse (and the reroll), and turned back on only by the call that paused it:
    a cycle made meanwhile is collected after."""
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def parse_module(text: str, source: str = "<ptx>") -> Module:
    with gc_paused():
        return _Parser(text, source).module()


def parse_statements(text: str, source: str = "<ptx>") -> list[Stmt]:
    """Parse a bare statement stream (a function body without braces)."""
    with gc_paused():
        p = _Parser(text, source)
        out: list[Stmt] = []
        while not p.eof():
            out.extend(p.statement())
        return out


class _Parser:
    def __init__(self, text: str, source: str, fast: bool = True):
        self.text, self.source = text, source
        if fast:
            self.toks, self.stmts = scan(text, source, _operand_of)
        else:
            self.toks, self.stmts = tokenize(text, source), {}
        self._nl: list[int] | None = None
        self.i = 0

    # -- token helpers ---------------------------------------------------------
    def eof(self) -> bool:
        return self.i >= len(self.toks)

    def _split(self, j: int) -> None:
        """Replace the `stmt` token at j by its ordinary tokens."""
        t = self.toks[j]
        self.toks[j:j + 1] = [Token(x.kind, x.text, x.pos + t.pos, x.glued and k > 0)
                              for k, x in enumerate(tokenize(t.text, self.source))]

    def peek(self, k: int = 0) -> Token | None:
        for j in range(self.i, min(self.i + k + 1, len(self.toks))):
            if self.toks[j].kind == "stmt":
                self._split(j)
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    def next(self) -> Token:
        if self.eof():
            self.error("unexpected end of input", len(self.text))
        t = self.peek()
        self.i += 1
        return t

    def at(self, text: str, k: int = 0) -> bool:
        # a `stmt` token starts with an opcode or `@`, never with what is asked for here
        j = self.i + k
        t = self.toks[j] if j < len(self.toks) else None
        return t is not None and t.text == text and t.kind in ("punct", "ident", "dot")

    def expect(self, text: str) -> Token:
        t = self.peek()
        if t is None or t.text != text:
            self.error(f"expected {text!r}, found {t.text if t else 'end of input'!r}",
                       t.pos if t else len(self.text))
        return self.next()

    def error(self, message: str, pos: int | None = None):
        if pos is None:
            t = self.peek()
            pos = t.pos if t else len(self.text)
        line, col = line_col(self.text, pos)
        raise PtxSyntaxError(message, line, col, self.source)

    def line_of(self, t: Token) -> int:
        if self._nl is None:
            self._nl = [m.start() for m in re.finditer("\n", self.text)]
        return bisect_right(self._nl, t.pos - 1) + 1

    # -- module ----------------------------------------------------------------
    def module(self) -> Module:
        items: list = []
        while not self.eof():
            t = self.peek()
            if t.kind == "comment":
                items.append(Comment(self.next().text))
            elif t.kind == "dot" and self._starts_function():
                items.append(self.function())
            elif t.kind == "dot":
                d, hoisted = self.directive()
                items.append(d)
                items.extend(hoisted)
            else:
                self.error(f"expected a directive or function, found {t.text!r}")
        return Module(tuple(items))

    def _starts_function(self) -> bool:
        k = 0
        while (t := self.peek(k)) is not None and t.kind == "dot" and t.text in _FUNC_PREFIX:
            if t.text in (".entry", ".func"):
                return True
            k += 1
        return False

    def directive(self, in_body: bool = False) -> tuple[Directive, list[Comment]]:
        first = self.next()
        toks, hoisted = [(first.text, False)], []
        line = self.line_of(first)
        if first.text in _LINE_DIRECTIVES:
            while (not self.eof() and self.toks[self.i].kind != "stmt"  # a stmt starts a line
                   and (t := self.peek()) is not None and self.line_of(t) == line):
                if t.kind == "comment":
                    hoisted.append(Comment(self.next().text))
                else:
                    toks.append((self.next().text, t.glued))
            return Directive(tuple(toks), semicolon=False), hoisted
        depth = 0
        while True:
            t = self.peek()
            if t is None:
                self.error(f"directive {first.text} is not terminated", first.pos)
            if t.kind == "comment":
                hoisted.append(Comment(self.next().text))
                continue
            if t.text == ";" and depth == 0:
                self.next()
                return Directive(tuple(toks), semicolon=True), hoisted
            if t.text == "}" and depth == 0:
                if in_body:  # a missing ';' before the closing brace
                    self.error(f"expected ';' after directive {first.text}", t.pos)
                self.error("unbalanced '}'", t.pos)
            depth += (t.text == "{") - (t.text == "}")
            toks.append((self.next().text, t.glued))
            if depth == 0 and t.text == "}" and first.text == ".section":  # `.section .debug_x {..}`
                return Directive(tuple(toks), semicolon=False), hoisted

    def _token_list(self, stop: set[str]) -> tuple[tuple[str, bool], ...]:
        out, depth = [], 0
        while True:
            t = self.peek()
            if t is None:
                self.error("unexpected end of input in a function header")
            if depth == 0 and t.text in stop:
                return tuple(out)
            depth += (t.text in "([") - (t.text in ")]")
            if t.kind != "comment":
                out.append((t.text, t.glued and bool(out)))
            self.next()

    def _param_list(self) -> tuple:
        self.expect("(")
        params = []
        while not self.at(")"):
            params.append(self._token_list({",", ")"}))
            if self.at(","):
                self.next()
        self.expect(")")
        return tuple(p for p in params if p)

    def function(self) -> Function:
        start = self.peek()
        pre = []
        while self.peek().text not in (".entry", ".func"):
            pre.append((self.next().text, False))
        kind = self.next().text
        ret = self._param_list() if self.at("(") else None
        name = self.next()
        if name.kind != "ident":
            self.error(f"expected a function name after {kind}, found {name.text!r}", name.pos)
        params = self._param_list() if self.at("(") else None
        post = self._token_list({"{", ";"})
        if self.at(";"):
            self.next()
            body = None
        else:
            self.expect("{")
            body = self.body_until_brace()
        return Function(kind, name.text, tuple(pre), ret, params, post, body, self.line_of(start))

    def body_until_brace(self) -> tuple[Stmt, ...]:
        out: list[Stmt] = []
        while not self.at("}"):
            if self.eof():
                self.error("missing '}' at end of function body")
            out.extend(self.statement())
        self.next()
        return tuple(out)

    # -- statements --------------------------------------------------------------
    def statement(self) -> list[Stmt]:
        t = self.toks[self.i]
        if t.kind == "stmt":
            self.i += 1
            return [self.stmts[t.pos]]
        t = self.peek()
        if t.kind == "comment":
            return [Comment(self.next().text)]
        if t.text == "{" and t.kind == "punct":
            self.next()
            return [Block(self.body_until_brace())]
        if t.kind == "dot":
            d, hoisted = self.directive(in_body=True)
            return [d, *hoisted]
        if t.kind == "ident" and self.at(":", 1):
            self.next(), self.next()
            return [Label(t.text)]
        if (t.kind == "ident" and self.at("(", 1) and self.peek(1).glued
                and t.text != "for"):  # Rolled-PTX label `$L__BB0_(2+i*2):`
            k = self.i
            self.next(), self.next()
            expr = self.number()
            if self.at(")") and self.at(":", 1):
                self.next(), self.next()
                return [Label(t.text, expr if isinstance(expr, VarExpr) else VarExpr(int(expr.text)))]
            self.i = k
        if t.kind == "ident" and (self.at("+", 1) or self.at("-", 1)):  # `$L__BB0_2+i*2:`
            k = self.i
            self.next()
            if self.at_term():
                r = self.short_varreg(t.text, t)
                if self.at(":"):
                    self.next()
                    return [Label(r.prefix, r.expr)]
            self.i = k
        if t.text == "@" or t.kind == "ident":
            return self.instruction()
        self.error(f"expected a statement, found {t.text!r}")

    def instruction(self) -> list[Stmt]:
        guard = None
        if self.at("@"):
            self.next()
            guard = self.operand()
        op = self.next()
        if op.kind != "ident":
            self.error(f"expected an opcode, found {op.text!r}", op.pos)
        mods = []
        while (t := self.peek()) is not None and t.kind == "dot" and t.glued:
            mods.append(self.next().text)
        if op.text == "for":
            return [self.loop(op, mods)]
        operands, hoisted = [], []
        while not self.at(";"):
            if self.eof() or self.at("}"):
                self.error(f"expected ';' after {op.text} instruction", op.pos)
            if operands:
                self.expect(",")
            while self.peek() is not None and self.peek().kind == "comment":
                hoisted.append(Comment(self.next().text))
            operands.append(self.operand())
        self.next()
        return [Instr(op.text, tuple(mods), tuple(operands), guard, self.line_of(op)), *hoisted]

    def loop(self, op: Token, mods: list[str]) -> Loop:
        if len(mods) != 2 or mods[0] != ".size" or not mods[1][1:].isdigit():
            self.error("a for header needs the modifier .size.N", op.pos)
        size = int(mods[1][1:])
        var = self.next()
        if var.kind != "ident":
            self.error("expected a loop variable", var.pos)
        self.expect("in"), self.expect("range"), self.expect("(")
        nums = [self.integer()]  # range(b), range(a, b) (format 2) or range(a, b, c)
        while len(nums) < 3 and self.at(","):
            self.next()
            nums.append(self.integer())
        self.expect(")"), self.expect(":")
        if len(nums) == 1:
            nums = [0, nums[0], 1]
        elif len(nums) == 2:
            nums.append(1)
        if nums[2] <= 0:
            self.error("range step must be positive", op.pos)
        body: list[Stmt] = []
        count = 0
        while count < size:
            if self.eof() or self.at("}"):
                self.error(f"for.size.{size}: only {count} statements follow", op.pos)
            for s in self.statement():
                body.append(s)
                count += 1 + (s.size if isinstance(s, Loop) else 0)
        if count != size:
            self.error(f"for.size.{size}: a nested loop crosses the body's end", op.pos)
        return Loop(var.text, nums[0], nums[1], nums[2], tuple(body))

    def integer(self) -> int:
        neg = self.at("-")
        if neg:
            self.next()
        t = self.next()
        if t.kind != "dec" or t.text.endswith("U"):
            self.error(f"expected an integer, found {t.text!r}", t.pos)
        return -int(t.text) if neg else int(t.text)

    # -- operands ----------------------------------------------------------------
    def operand(self):
        o = self._operand1()
        if self.at("|"):
            self.next()
            o = Pipe(o, self._operand1())
        return o

    def _operand1(self):
        t = self.peek()
        if t is None:
            self.error("expected an operand, found end of input")
        if t.text == "!":
            self.next()
            return Neg(self._operand1())
        if t.text == "{":
            return Vec(self._items("{", "}"))
        if t.text == "(":
            return self.number() if self.at_shift() else Paren(self._items("(", ")"))
        if t.text == "[":
            return (self.number() if self.at_table() else self.imm_table() if self.at_imm_table()
                    else self.address())
        if t.kind in _NUMERIC or t.text == "-":
            return self.number()
        if t.kind == "reg":
            return self.register()
        if t.kind == "ident":
            self.next()
            nxt = self.peek()
            if nxt is not None and nxt.glued and nxt.text == "(":  # `$L__BB0_(2+i*2)`
                self.next()
                expr = self.number()
                self.expect(")")
                return VarReg(t.text, expr if isinstance(expr, VarExpr) else VarExpr(int(expr.text)))
            if self.at_term():  # `$L__BB0_2+i*2` (format 2)
                return self.short_varreg(t.text, t)
            base = Sym(t.text)
            if self.at("+") or (self.at("-") and self.peek(1) and self.peek(1).kind in _NUMERIC):
                op = self.next().text
                return Addr(base, self.number(), op, bracket=False)
            return base
        self.error(f"expected an operand, found {t.text!r}")

    def _items(self, open_: str, close: str) -> tuple:
        self.expect(open_)
        items = []
        while not self.at(close):
            if items:
                self.expect(",")
            items.append(self.operand())
        self.next()
        return tuple(items)

    def register(self):
        t = self.next()
        name = t.text
        nxt = self.peek()
        if nxt is not None and nxt.glued and nxt.text == "(":  # VarReg %f(3+i*2)
            self.next()
            expr = self.number()
            if isinstance(expr, Imm):
                expr = VarExpr(int(expr.text))
            self.expect(")")
            return VarReg(name, expr)
        if nxt is not None and nxt.glued and nxt.text == "[" and self.at_table():  # %r[45,48,51][i]
            # (the one table: a `+` after it is an address offset's, syntax.fmt_varreg)
            return VarReg(name, VarExpr(0, (), (), (self.table(),)))
        if self.at_term():
            return self.short_varreg(name, t)
        while (nxt := self.peek()) is not None and nxt.glued and nxt.kind == "dot":
            name += self.next().text  # %tid.x
        return Reg(name)

    def at_shift(self, k: int = 0) -> bool:
        """At a geometric term `(Nat>>var)`, `(Nat<<var*Nat)` (Rolled-PTX extension)?"""
        toks = [self.peek(k + d) for d in range(6)]
        if any(t is None for t in toks):
            return False
        o, n, a, b, v, c = toks
        return (o.text == "(" and n.kind == "dec" and a.text == b.text and a.text in "<>"
                and b.glued and v.kind == "ident" and c.text in (")", "*"))

    def shift(self, sign: int) -> tuple[int, str, str, int]:
        self.expect("(")
        n = self.next()
        if n.text.endswith("U") or int(n.text) == 0:
            self.error(f"a shift term needs a positive integer, found {n.text!r}", n.pos)
        op = self.next().text * 2
        self.next()
        var = self.next().text
        k = 1
        if self.at("*"):
            self.next()
            t = self.next()
            if t.kind != "dec" or t.text.endswith("U") or int(t.text) == 0:
                self.error(f"a shift step needs a positive integer, found {t.text!r}", t.pos)
            k = int(t.text)
        self.expect(")")
        return sign * int(n.text), op, var, k

    def number(self):
        """An immediate, or a VarExpr `Int {(+|-) var*Nat} {(+|-) (Nat>>var[*Nat])}`."""
        start = self.peek()
        shifts: list[tuple[int, str, str, int]] = []
        tables: list[tuple[str, tuple[int, ...]]] = []
        if self.at_shift():  # `(2048>>i)`: a VarExpr whose base 0 is left out
            shifts.append(self.shift(1))
            t, text = start, "0"
        elif self.at_table():  # `[8,12,5][i]` (format 2), also without its base 0
            tables.append(self.table())
            t, text = start, "0"
        else:
            neg = self.at("-")
            if neg:
                self.next()
            t = self.next()
            if t.kind not in _NUMERIC:
                self.error(f"expected a number, found {t.text!r}", t.pos)
            text = ("-" if neg else "") + t.text
        terms = []
        while (self.at("+") or self.at("-")) and self.peek(1) is not None:
            if self.peek(1).kind == "ident" and not shifts and not tables:
                terms.append(self.term())
            elif self.at_shift(1):
                shifts.append(self.shift(-1 if self.next().text == "-" else 1))
            elif self.at("+") and self.at_table(1):
                self.next()
                tables.append(self.table())
            else:
                break
        pins = self.pins()
        if terms or shifts or tables or pins:
            if t.kind != "dec" and not ((shifts or tables) and t is start):
                self.error("a VarExpr starts with a decimal integer", start.pos)
            return VarExpr(int(text), tuple(terms), tuple(shifts), tuple(tables), pins)
        return Imm(text)

    def pins(self) -> tuple[tuple[str, int, int], ...]:
        """A VarExpr's pinned values, `!1`, `!3:1`, `!j=1`, `!j=3:1` (syntax.VarExpr.pins), where any."""
        out = []
        while self.at("!"):
            self.next()
            var, copy = DEFAULT_INDEX, 0
            t = self.peek()
            if t is not None and t.kind == "ident" and self.at("=", 1):
                var = self.next().text
                self.next()
            t = self.peek()
            if t is not None and t.kind == "dec" and self.at(":", 1):
                copy = self.integer()
                self.next()
            out.append((var, copy, self.integer()))
        return tuple(out)

    def at_table(self, k: int = 0) -> bool:
        """At a table term `[Int {, Int}][var]` (format 2): one value per loop copy?"""
        t = self.peek(k)
        if t is None or t.text != "[":
            return False
        k += 1
        n = 0
        while True:
            t = self.peek(k)
            if t is not None and t.text == "-":
                k += 1
                t = self.peek(k)
            if t is None or t.kind != "dec" or t.text.endswith("U"):
                return False
            t = self.peek(k + 1)
            if t is None or t.text not in (",", "]"):
                return False
            k += 2
            n += 1
            if t.text == "]":
                break
        return self._at_index(k) or n >= 2  # `[8,4][j]`, or `[8,4]` for `[8,4][i]` (syntax.table_index)

    def _at_index(self, k: int) -> bool:
        """At a table's index `[var]` (k tokens on)?"""
        toks = [self.peek(k + d) for d in range(3)]
        return (all(x is not None for x in toks) and toks[0].text == "[" and toks[1].kind == "ident"
                and toks[2].text == "]")

    def _index(self) -> str:
        """A table's index `[var]`, or the default one where it is left out (syntax.table_index)."""
        if not self._at_index(0):
            return DEFAULT_INDEX
        self.expect("[")
        var = self.next().text
        self.expect("]")
        return var

    def at_imm_table(self) -> bool:
        """At a float-literal table `[0f..{,0f..}][var]` (syntax.ImmTable)?"""
        k = 1
        while True:
            t, sep = self.peek(k), self.peek(k + 1)
            if t is None or t.kind != "float" or sep is None or sep.text not in (",", "]"):
                return False
            k += 2
            if sep.text == "]":
                break
        return self._at_index(k) or k >= 5  # (two literals at least where the index is left out)

    def imm_table(self) -> ImmTable:
        self.expect("[")
        items = [self.next().text]
        while self.at(","):
            self.next()
            items.append(self.next().text)
        self.expect("]")
        return ImmTable(self._index(), tuple(items))

    def table(self) -> tuple[str, tuple[int, ...]]:
        self.expect("[")
        vals = [self.integer()]
        while self.at(","):
            self.next()
            vals.append(self.integer())
        self.expect("]")
        return self._index(), tuple(vals)

    def term(self) -> tuple[str, int]:
        """`+var*Nat`, `-var*Nat`, or (format 2) `+var` / `-var` for a coefficient of 1."""
        sign = -1 if self.next().text == "-" else 1
        var = self.next()
        if var.kind != "ident":
            self.error(f"expected a loop variable, found {var.text!r}", var.pos)
        if not self.at("*"):
            return var.text, sign
        self.next()
        c = self.next()
        if c.kind != "dec" or c.text.endswith("U"):
            self.error(f"expected a coefficient, found {c.text!r}", c.pos)
        return var.text, sign * int(c.text)

    def at_term(self) -> bool:
        """At `+var` / `-var` (a VarReg's terms in format 2: `%f22+i*21`)?"""
        if not (self.at("+") or self.at("-")):
            return False
        t = self.peek(1)
        return t is not None and t.kind == "ident"

    def short_varreg(self, name: str, t: Token):
        """`%f22+i*21` / `$L__BB0_2+i*2`: the register of copy 0 and its terms (format 2)."""
        m = _VARREG_SPLIT.match(name)
        if m is None:
            self.error(f"{name!r} has no number for a loop variable's terms", t.pos)
        terms = []
        while self.at_term():
            terms.append(self.term())
        return VarReg(m.group(1), VarExpr(int(m.group(2)), tuple(terms), pins=self.pins()))

    def address(self) -> Addr:
        self.expect("[")
        base = offset = None
        op = "+"
        if not self.at("]"):
            base = self._operand1()
            if isinstance(base, Addr) and not base.bracket:  # [sym+4] came back whole
                base, offset, op = base.base, base.offset, base.op
            elif self.at("+") or self.at("-"):
                op = self.next().text
                offset = self.number()
        rest = []
        while self.at(","):
            self.next()
            rest.append(self.operand())
        self.expect("]")
        return Addr(base, offset, op, tuple(rest))


def _operand_of(text: str):
    """One operand read alone (scan.py's cache fills from this), or None."""
    try:
        p = _Parser(text, "<operand>", fast=False)
        o = p.operand()
    except PtxSyntaxError:
        return None
    return o if p.eof() else None

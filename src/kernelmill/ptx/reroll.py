"""Loop rerolling: plain PTX -> Rolled-PTX (SPEC.md section 3), lossless.

Each statement is split into a *skeleton* (its text with every numeric hole
blanked: register numbers, decimal immediates, address offsets, and the bases of
existing VarExprs) and the tuple of hole values. Within a basic block, `p`
consecutive statements repeated `c` times form a loop when the skeletons repeat
exactly and every hole is linear in the copy index (`value = a + t*d`, d may be
0). The template is copy 0 with each varying hole replaced by `a + var*d`.

Lossless by construction: expanding the template at `var = t` re-creates every
hole value of copy t, and everything else is the shared skeleton. It is also
checked: each loop is expanded and compared with the statements it replaces
before it is applied, and every rerolled function is expanded and compared
with the original (`RerollStats.checked / .failed`).

Unlike PtxDec's heuristic, a loop is applied only when it makes the text shorter
in tokens, and the search looks one period ahead so a first iteration that
differs (a peeled accumulator) does not hide the long loop after it. Passes are
repeated on the output to fold nested unrolls (an inner loop becomes a
statement of the outer template, its VarExprs gain a term for the outer var).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field

from .expand import expand_stmts
from .syntax import (Addr, Block, Comment, Directive, Function, Imm, Instr, Label, Loop,
                     Module, Neg, Paren, Pipe, Reg, Stmt, Sym, Vec, VarExpr, VarReg)

_REGNUM = re.compile(r"^(%[A-Za-z_]+?)(0|[1-9]\d*)$")
# compiler-made labels: numbered, so an unrolled body with branches rolls too
_LABELNUM = re.compile(r"^(\$L\w*?_)(0|[1-9]\d*)$")
# opcodes that end a basic block (never inside a loop body)
_CONTROL = {"brx", "ret", "exit", "trap", "call", "brkpt"}
# extra tokens a varying hole costs in the template (see syntax.fmt_operand)
_EXTRA = {"sym": 7, "reg": 7, "vreg": 4, "imm": 4, "vimm": 4, "off": 4, "off0": 6}
_HEADER_TOKENS = 14  # for .size .N i in range ( a , b , c ) :
_VARS = ("i", "j", "k", "l", "m", "n")


@dataclass
class RerollConfig:
    max_period: int = 256      # longest loop body (in statements) searched
    max_candidates: int = 48   # candidate periods tried per position
    max_passes: int = 6        # re-applications for nested loops


@dataclass
class RerollStats:
    functions: int = 0
    checked: int = 0     # functions whose expand(reroll(f)) == f was verified
    failed: int = 0      # functions kept unrolled because the check failed
    loops: int = 0
    rejected_templates: int = 0
    failures: list[str] = field(default_factory=list)


# --- holes ----------------------------------------------------------------------
def _map_op(o, f):
    """Rebuild operand `o`, passing each numeric hole to f(kind, node) -> node."""
    if isinstance(o, Reg):
        return f("reg", o) if _REGNUM.match(o.name) else o
    if isinstance(o, Sym):
        return f("sym", o) if _LABELNUM.match(o.name) else o
    if isinstance(o, VarReg):
        return f("vreg", o)
    if isinstance(o, Imm):
        return f("imm", o) if o.is_dec else o
    if isinstance(o, VarExpr):
        return f("vimm", o)
    if isinstance(o, Neg):
        return Neg(_map_op(o.operand, f))
    if isinstance(o, Vec):
        return Vec(tuple(_map_op(x, f) for x in o.items))
    if isinstance(o, Paren):
        return Paren(tuple(_map_op(x, f) for x in o.items))
    if isinstance(o, Pipe):
        return Pipe(_map_op(o.left, f), _map_op(o.right, f))
    if isinstance(o, Addr):
        base = _map_op(o.base, f) if o.base is not None else None
        off = o.offset
        if o.op == "+" and (isinstance(off, VarExpr)
                            or (off is None and o.bracket)
                            or (isinstance(off, Imm) and off.is_dec and off.text != "0")):
            off = f("off0" if off is None else "off", off)
        return Addr(base, off, o.op, tuple(_map_op(x, f) for x in o.rest), o.bracket)
    return o


def _map_stmt(s: Stmt, f) -> Stmt:
    if isinstance(s, Instr):
        g = _map_op(s.guard, f) if s.guard is not None else None
        return Instr(s.opcode, s.mods, tuple(_map_op(o, f) for o in s.operands), g, s.line)
    if isinstance(s, Loop):
        return Loop(s.var, s.start, s.limit, s.step, tuple(_map_stmt(b, f) for b in s.body))
    if isinstance(s, Block):  # inline-asm scopes `{ cvt.rn.f16.f32 %rs1, %f1; }`
        return Block(tuple(_map_stmt(b, f) for b in s.body))
    if isinstance(s, Label):
        r = _map_op(Sym(s.name) if s.expr is None else VarReg(s.name, s.expr), f)
        return Label(r.name) if isinstance(r, Sym) else Label(r.prefix, r.expr)
    return s


def _hole_value(node) -> int:
    if node is None:
        return 0
    if isinstance(node, Reg):
        return int(_REGNUM.match(node.name).group(2))
    if isinstance(node, Sym):
        return int(_LABELNUM.match(node.name).group(2))
    if isinstance(node, VarReg):
        return node.expr.base
    if isinstance(node, VarExpr):
        return node.base
    return int(node.text)


def _terms(node) -> tuple:
    if isinstance(node, VarReg):
        return node.expr.terms
    if isinstance(node, VarExpr):
        return node.terms
    return ()


def _split(s: Stmt) -> tuple[str, tuple[int, ...], tuple[str, ...]]:
    """(skeleton key, hole values, hole kinds) of one statement."""
    vals: list[int] = []
    kinds: list[str] = []

    def rec(kind, node):
        vals.append(_hole_value(node))
        kinds.append(kind)
        if kind == "reg":
            return Reg(_REGNUM.match(node.name).group(1) + "#")
        if kind == "sym":
            return Sym(_LABELNUM.match(node.name).group(1) + "#")
        if kind == "vreg":
            return Reg(f"{node.prefix}#{node.expr.terms}")
        if kind in ("off", "off0"):
            return Imm(f"#o{_terms(node)}")
        return Sym(f"#i{_terms(node)}")

    skel = repr(_map_stmt(s, rec)) if isinstance(s, (Instr, Loop, Label, Block)) else repr(s)
    return skel, tuple(vals), tuple(kinds)


def _template(s: Stmt, base: tuple[int, ...], delta: tuple[int, ...], var: str) -> Stmt:
    it = iter(zip(base, delta))

    def rec(kind, node):
        b, d = next(it)
        if d == 0:
            return node
        terms = _terms(node) + ((var, d),)
        if kind in ("reg", "vreg", "sym"):
            prefix = (_REGNUM.match(node.name).group(1) if kind == "reg" else
                      _LABELNUM.match(node.name).group(1) if kind == "sym" else node.prefix)
            return VarReg(prefix, VarExpr(b, terms))
        return VarExpr(b, terms)

    return _map_stmt(s, rec)


def _vars_in(stmts) -> set[str]:
    out: set[str] = set()

    def rec(kind, node):
        out.update(v for v, _ in _terms(node))
        return node

    for s in stmts:
        if isinstance(s, Loop):
            out.add(s.var)
            out |= _vars_in(s.body)
        else:
            _map_stmt(s, rec)
    return out


def _fresh_var(stmts, avoid=()) -> str:
    used = _vars_in(stmts) | set(avoid)
    for k in range(100):
        for v in _VARS:
            name = v if k == 0 else f"{v}{k}"
            if name not in used:
                return name
    raise RuntimeError("no fresh loop variable")


def _is_barrier(s: Stmt) -> bool:
    if isinstance(s, Directive):
        return s.name in (".reg", ".shared", ".local", ".param", ".pragma")
    return isinstance(s, Instr) and s.opcode in _CONTROL


# --- the search over one segment (straight-line run inside a basic block) -------
@dataclass
class _Cand:
    gain: int
    pos: int
    period: int
    copies: int


class _Segment:
    def __init__(self, items: list[Stmt], cfg: RerollConfig, toks: list[int], free: tuple = ()):
        self.items, self.cfg, self.toks, self.free = items, cfg, toks, free
        ids: dict[str, int] = {}
        self.sk, self.vals, self.kinds = [], [], []
        self.where: dict[int, list[int]] = {}
        for k, s in enumerate(items):
            key, v, kd = _split(s)
            sid = ids.setdefault(key, len(ids))
            self.sk.append(sid)
            self.vals.append(v)
            self.kinds.append(kd)
            self.where.setdefault(sid, []).append(k)
        self.memo: dict[int, _Cand | None] = {}

    def best(self, pos: int) -> _Cand | None:
        if pos in self.memo:
            return self.memo[pos]
        n, sk, vals = len(self.items), self.sk, self.vals
        occ = self.where[sk[pos]]
        j = bisect_right(occ, pos)
        best = None
        for q in occ[j:j + self.cfg.max_candidates]:
            p = q - pos
            if p > self.cfg.max_period or pos + 2 * p > n:
                break
            if sk[pos:q] != sk[q:q + p]:
                continue
            base = vals[pos:q]
            delta = [tuple(b - a for a, b in zip(v0, v1)) for v0, v1 in zip(base, vals[q:q + p])]
            c = 2
            while pos + (c + 1) * p <= n:
                s0 = pos + c * p
                if sk[s0:s0 + p] != sk[pos:q]:
                    break
                if any(vals[s0 + k] != tuple(a + c * d for a, d in zip(base[k], delta[k]))
                       for k in range(p)):
                    break
                c += 1
            extra = sum(_EXTRA[kd] for k in range(p)
                        for kd, d in zip(self.kinds[pos + k], delta[k]) if d != 0)
            body = sum(self.toks[pos:q])  # copies differ in length ([%r8] vs [%r8+64])
            gain = sum(self.toks[pos:pos + c * p]) - (_HEADER_TOKENS + body + extra)
            if best is None or gain > best.gain:
                best = _Cand(gain, pos, p, c)
        self.memo[pos] = best
        return best

    def roll(self, stats: RerollStats) -> list[Stmt]:
        out: list[Stmt] = []
        pos, n = 0, len(self.items)
        while pos < n:
            b = self.best(pos)
            if b is not None and b.gain > 0 and not any(
                    (o := self.best(pos + k)) is not None and o.gain > b.gain
                    for k in range(1, b.period + 1) if pos + k < n):
                loop = self._make(b)
                span = self.items[pos:pos + b.period * b.copies]
                if loop is not None and self._same(loop, span):
                    out.append(loop)
                    stats.loops += 1
                    pos += b.period * b.copies
                    continue
                stats.rejected_templates += 1
            out.append(self.items[pos])
            pos += 1
        return out

    def _same(self, loop: Loop, span: list[Stmt]) -> bool:
        # inside a loop body the enclosing variables are free: spot-check them at
        # 0 and 1 here; the whole-function check in reroll_function is the guarantee
        envs = [{}] if not self.free else [{v: x for v in self.free} for x in (0, 1)]
        return all(expand_stmts([loop], env) == expand_stmts(span, env) for env in envs)

    def _make(self, b: _Cand) -> Loop | None:
        p, pos = b.period, b.pos
        body_src = self.items[pos:pos + p]
        var = _fresh_var(self.items[pos:pos + p * b.copies], self.free)
        body = []
        for k in range(p):
            v0, v1 = self.vals[pos + k], self.vals[pos + p + k]
            body.append(_template(body_src[k], v0, tuple(y - x for x, y in zip(v0, v1)), var))
        return Loop(var, 0, b.copies, 1, tuple(body))


# --- drivers --------------------------------------------------------------------
def _tokens(s: Stmt) -> int:
    from .lexer import count_tokens
    from .syntax import fmt_stmt
    return count_tokens("\n".join(fmt_stmt(s)))


def _roll_stream(stmts, cfg: RerollConfig, stats: RerollStats, free: tuple = ()) -> list[Stmt]:
    out: list[Stmt] = []
    seg: list[Stmt] = []

    def flush():
        if len(seg) >= 4:
            out.extend(_Segment(seg, cfg, [_tokens(s) for s in seg], free).roll(stats))
        else:
            out.extend(seg)
        seg.clear()

    for s in stmts:
        if isinstance(s, Block):  # a scope is one statement of the stream
            seg.append(Block(tuple(_roll_stream(s.body, cfg, stats, free))))
        elif isinstance(s, Loop):  # folds as one statement; its body is rolled too
            seg.append(Loop(s.var, s.start, s.limit, s.step,
                            tuple(_roll_stream(s.body, cfg, stats, free + (s.var,)))))
        elif _is_barrier(s):
            flush()
            out.append(s)
        else:
            seg.append(s)
    flush()
    return out


def reroll_stmts(stmts, cfg: RerollConfig | None = None,
                 stats: RerollStats | None = None) -> list[Stmt]:
    """Reroll a statement stream; repeated until no new loop folds (nesting)."""
    cfg = cfg or RerollConfig()
    stats = stats if stats is not None else RerollStats()
    cur = list(stmts)
    for _ in range(cfg.max_passes):
        before = stats.loops
        cur = _roll_stream(cur, cfg, stats)
        if stats.loops == before:
            break
    return cur


def reroll_function(f: Function, cfg: RerollConfig | None = None,
                    stats: RerollStats | None = None) -> Function:
    stats = stats if stats is not None else RerollStats()
    if f.body is None:
        return f
    stats.functions += 1
    body = reroll_stmts(f.body, cfg, stats)
    # the invariant, on every output: expand(reroll(P)) == P
    if expand_stmts(body) != expand_stmts(f.body):
        stats.failed += 1
        stats.failures.append(f.name)
        return f
    stats.checked += 1
    return Function(f.kind, f.name, f.pre, f.ret, f.params, f.post, tuple(body), f.line)


def reroll_module(m: Module, cfg: RerollConfig | None = None,
                  stats: RerollStats | None = None) -> Module:
    stats = stats if stats is not None else RerollStats()
    return Module(tuple(reroll_function(x, cfg, stats) if isinstance(x, Function) else x
                        for x in m.items))


def reroll_text(text: str, source: str = "<ptx>", cfg: RerollConfig | None = None,
                stats: RerollStats | None = None) -> str:
    """Plain PTX text -> Rolled-PTX text (raises PtxSyntaxError on bad input)."""
    from .parser import parse_module
    from .syntax import fmt_module
    return fmt_module(reroll_module(parse_module(text, source), cfg, stats))

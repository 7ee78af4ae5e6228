"""Loop rerolling: plain PTX -> Rolled-PTX (SPEC.md section 3), lossless.

Within a basic block, `p` consecutive statements repeated `c` times form a loop
when their skeletons repeat exactly and every numeric hole follows a model in
the copy index (holes.py: linear `a + t*d` as in the paper, or our geometric
`(m>>t)` / `(m<<t)` extension for halving offsets). The template is copy 0 with
each varying hole written as a VarExpr in the loop variable.

Lossless by construction: expanding the template at `var = t` re-creates every
hole value of copy t, and everything else is the shared skeleton. It is also
checked: each loop is expanded and compared with the statements it replaces
before it is applied, and every rerolled function is expanded and compared
with the original (`RerollStats.checked / .failed`).

Unlike PtxDec's first-match heuristic, the loops of a straight-line segment are
chosen together: every position offers candidates (each matching body size,
with its longest run of copies and that run shortened by one or two copies),
each scored by the tokens it saves, and a dynamic programme picks the
non-overlapping set that saves the most. So a peeled or rotated first copy only
stays outside the loop, and a loop is applied only when it shortens the text.
Passes are repeated on the output to fold nested unrolls (an inner loop becomes
a statement of the outer template, its VarExprs gain a term for the outer var).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from functools import lru_cache

from .expand import expand_stmts
from .holes import cost, fit, predict, split, template, vars_in
from .lexer import count_tokens
from .syntax import Block, Directive, Function, Instr, Loop, Module, Stmt, fmt_stmt, fmt_stmts

# opcodes that end a basic block (never inside a loop body)
_CONTROL = {"brx", "ret", "exit", "trap", "call", "brkpt"}
_HEADER_TOKENS = 14  # for .size .N i in range ( a , b , c ) :
# extra tokens of a linear hole: `%r7` -> `%r(7+i*1)`, `[%r8]` -> `[%r8+0+i*64]`, else `+i*d`
_LINEAR_COST = {"reg": 7, "sym": 7, "off0": 6}
_VARS = ("i", "j", "k", "l", "m", "n")


@dataclass
class RerollConfig:
    max_period: int = 256      # longest loop body (in statements) searched
    max_candidates: int = 48   # candidate periods tried per position
    max_passes: int = 6        # re-applications for nested loops
    geometric: bool = True     # allow `(m>>i)` / `(m<<i)` terms (our grammar extension)
    strategy: str = "best"     # "dp" | "greedy" | "best" (run both, keep the shorter)

    def __post_init__(self):
        if self.strategy not in ("dp", "greedy", "best"):
            raise ValueError(f"unknown reroll strategy {self.strategy!r} (dp, greedy, best)")


@dataclass
class RerollStats:
    functions: int = 0
    checked: int = 0     # functions whose expand(reroll(f)) == f was verified
    failed: int = 0      # functions kept unrolled because the check failed
    loops: int = 0
    geometric_loops: int = 0  # loops with at least one `(m>>i)` / `(m<<i)` term
    rejected_templates: int = 0
    failures: list[str] = field(default_factory=list)


def _fresh_var(stmts, avoid=()) -> str:
    used = vars_in(stmts) | set(avoid)
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
    deltas: list       # per body statement, per hole: the linear step
    geo: list | None   # per body statement, per hole: models (holes.py), if not all linear

    @property
    def models(self) -> list:
        return self.geo or [tuple(("lin", d) for d in dk) for dk in self.deltas]


class _Segment:
    def __init__(self, items: list[Stmt], cfg: RerollConfig, toks: list[int], free: tuple = ()):
        self.items, self.cfg, self.free = items, cfg, free
        ids: dict[str, int] = {}
        self.sk, self.vals, self.kinds, self.shapes = [], [], [], []
        self.where: dict[int, list[int]] = {}
        for k, s in enumerate(items):
            key, v, kd, sh = split(s)
            sid = ids.setdefault(key, len(ids))
            self.sk.append(sid)
            self.vals.append(v)
            self.kinds.append(kd)
            self.shapes.append(sh)
            self.where.setdefault(sid, []).append(k)
        # what a linear hole costs in the template, per statement and hole
        self.lincost = [tuple(_LINEAR_COST.get(k, 4) for k in kd) for kd in self.kinds]
        self.cum = [0]
        for t in toks:
            self.cum.append(self.cum[-1] + t)
        # (pos, period) -> (copies, deltas) of all-linear runs, reused by pos - period
        self.linear: dict[tuple[int, int], tuple[int, list]] = {}
        self.memo: dict[int, list[_Cand]] = {}  # shared by the plans (see reroll_stmts)

    def _copies(self, pos: int, p: int, models: list, start: int) -> int:
        n, sk, vals = len(self.items), self.sk, self.vals
        base, c = vals[pos:pos + p], start
        while pos + (c + 1) * p <= n:
            s0 = pos + c * p
            if sk[s0:s0 + p] != sk[pos:pos + p]:
                break
            if any(vals[s0 + k] != tuple(predict(m, v, c) for m, v in zip(models[k], base[k]))
                   for k in range(p)):
                break
            c += 1
        return c

    def _copies_linear(self, pos: int, p: int, deltas: list) -> int:
        n, sk, vals = len(self.items), self.sk, self.vals
        base, c = vals[pos:pos + p], 2
        while pos + (c + 1) * p <= n:
            s0 = pos + c * p
            if sk[s0:s0 + p] != sk[pos:pos + p]:
                break
            if any(vals[s0 + k] != tuple(a + c * d for a, d in zip(base[k], deltas[k]))
                   for k in range(p)):
                break
            c += 1
        return c

    def options(self, pos: int) -> list[_Cand]:
        """Loops that may start at `pos`: (body size, copies) with a positive gain."""
        if pos not in self.memo:
            self.memo[pos] = self._options(pos)
        return self.memo[pos]

    def _options(self, pos: int) -> list[_Cand]:
        n, sk, vals, cfg, cum = len(self.items), self.sk, self.vals, self.cfg, self.cum
        occ = self.where[sk[pos]]
        j = bisect_right(occ, pos)
        out: list[_Cand] = []
        found: list[tuple[int, int]] = []  # (period, copies) of runs found here
        for q in occ[j:j + cfg.max_candidates]:
            p = q - pos
            if p > cfg.max_period or pos + 2 * p > n:
                break
            # a multiple of a period whose run already covers two of its bodies is
            # the same loop with a longer body: never better, so not searched
            if any(p % p0 == 0 and c0 * p0 >= 2 * p for p0, c0 in found):
                continue
            body_sk = sk[pos:q]
            if body_sk != sk[q:q + p]:
                continue
            # copies by skeleton alone bound the run: skip bodies that cannot pay
            cs = 2
            while pos + (cs + 1) * p <= n and sk[pos + cs * p:pos + (cs + 1) * p] == body_sk:
                cs += 1
            if cum[pos + cs * p] - cum[q] <= _HEADER_TOKENS:
                found.append((p, cs))
                continue
            deltas = [tuple(b - a for a, b in zip(v0, v1)) for v0, v1 in zip(vals[pos:q], vals[q:q + p])]
            models = None  # all linear, given by deltas
            nxt = self.linear.get((q, p))
            if nxt is not None and nxt[1] == deltas:
                c = nxt[0] + 1  # the run found one period later, plus this copy
            else:
                c = self._copies_linear(pos, p, deltas)
                if c == 2 and cfg.geometric and cs > 2:
                    geo = [tuple(fit(kd, a, b, e) for kd, a, b, e in
                                 zip(self.kinds[pos + k], vals[pos + k], vals[q + k], vals[q + p + k]))
                           for k in range(p)]
                    if any(m[0] != "lin" for mk in geo for m in mk):
                        c3 = self._copies(pos, p, geo, 2)
                        if c3 > 2:
                            c, models = c3, geo
            if models is None:
                self.linear[(pos, p)] = (c, deltas)
            found.append((p, c))
            fixed = _HEADER_TOKENS + cum[q] - cum[pos]
            if cum[pos + c * p] - cum[pos] <= fixed:
                continue  # not even the longest run pays for its header
            if models is None:
                lc = self.lincost
                fixed += sum(x for k in range(p) for x, d in zip(lc[pos + k], deltas[k]) if d)
            else:
                fixed += sum(cost(kd, v, m, sh) for k in range(p) for kd, v, m, sh in
                             zip(self.kinds[pos + k], vals[pos + k], models[k], self.shapes[pos + k]))
            for cc in range(c, max(1, c - 3), -1):
                gain = cum[pos + cc * p] - cum[pos] - fixed
                if gain > 0:
                    out.append(_Cand(gain, pos, p, cc, deltas, models))
        return out

    def _plan_dp(self) -> list[_Cand | None]:
        """The non-overlapping loops that save the most tokens in this segment."""
        n = len(self.items)
        best = [0] * (n + 1)       # most tokens saved in items[pos:]
        choice: list[_Cand | None] = [None] * (n + 1)
        for pos in range(n - 1, -1, -1):
            best[pos] = best[pos + 1]
            for c in self.options(pos):
                v = c.gain + best[pos + c.period * c.copies]
                if v > best[pos]:
                    best[pos], choice[pos] = v, c
        return choice

    def _plan_greedy(self) -> list[_Cand | None]:
        """Top-down as in PtxDec: at each position the loop that saves the most,
        unless one starting within its first body saves more (a peeled copy)."""
        n = len(self.items)
        memo: dict[int, _Cand | None] = {}

        def at(pos: int) -> _Cand | None:
            if pos not in memo:
                memo[pos] = max(self.options(pos), key=lambda c: c.gain, default=None)
            return memo[pos]

        choice: list[_Cand | None] = [None] * (n + 1)
        pos = 0
        while pos < n:
            b = at(pos)
            if b is not None and not any((o := at(pos + k)) is not None and o.gain > b.gain
                                         for k in range(1, b.period + 1) if pos + k < n):
                choice[pos] = b
                pos += b.period * b.copies
            else:
                pos += 1
        return choice

    def roll(self, stats: RerollStats, strategy: str = "dp") -> list[Stmt]:
        n = len(self.items)
        choice = self._plan_dp() if strategy == "dp" else self._plan_greedy()
        out: list[Stmt] = []
        pos = 0
        while pos < n:
            b = choice[pos]
            if b is not None:
                loop = self._make(b)
                span = self.items[pos:pos + b.period * b.copies]
                if self._same(loop, span):
                    out.append(loop)
                    stats.loops += 1
                    stats.geometric_loops += b.geo is not None
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
        try:
            return all(expand_stmts([loop], env) == expand_stmts(span, env) for env in envs)
        except ValueError:  # e.g. a register number that goes negative at a spot-check value
            return False

    def _make(self, b: _Cand) -> Loop:
        p, pos = b.period, b.pos
        var = _fresh_var(self.items[pos:pos + p * b.copies], self.free)
        body = tuple(template(self.items[pos + k], self.vals[pos + k], b.models[k], var)
                     for k in range(p))
        return Loop(var, 0, b.copies, 1, body)


# --- drivers --------------------------------------------------------------------
@lru_cache(maxsize=65536)
def _tokens(s: Stmt) -> int:
    return count_tokens("\n".join(fmt_stmt(s)))


def _roll_stream(stmts, cfg: RerollConfig, stats: RerollStats, strategy: str,
                 cache: dict, free: tuple = ()) -> list[Stmt]:
    out: list[Stmt] = []
    seg: list[Stmt] = []

    def flush():
        if len(seg) >= 4:
            key = (tuple(seg), free)  # the plans start from the same segments
            if key not in cache:
                cache[key] = _Segment(list(seg), cfg, [_tokens(s) for s in seg], free)
            out.extend(cache[key].roll(stats, strategy))
        else:
            out.extend(seg)
        seg.clear()

    for s in stmts:
        if isinstance(s, Block):  # a scope is one statement of the stream
            seg.append(Block(tuple(_roll_stream(s.body, cfg, stats, strategy, cache, free))))
        elif isinstance(s, Loop):  # folds as one statement; its body is rolled too
            seg.append(Loop(s.var, s.start, s.limit, s.step,
                            tuple(_roll_stream(s.body, cfg, stats, strategy, cache, free + (s.var,)))))
        elif _is_barrier(s):
            flush()
            out.append(s)
        else:
            seg.append(s)
    flush()
    return out


def _reroll_with(stmts, cfg: RerollConfig, stats: RerollStats, strategy: str,
                 cache: dict) -> list[Stmt]:
    cur = list(stmts)
    for _ in range(cfg.max_passes):
        before = stats.loops
        cur = _roll_stream(cur, cfg, stats, strategy, cache)
        if stats.loops == before:
            break
    return cur


def reroll_stmts(stmts, cfg: RerollConfig | None = None,
                 stats: RerollStats | None = None) -> list[Stmt]:
    """Reroll a statement stream; repeated until no new loop folds (nesting).

    With `strategy="best"` both plans run and the shorter output is kept: which
    inner loops fold best into outer ones depends on the kernel, and the greedy
    plan's rotations sometimes nest better than the per-pass optimum."""
    cfg = cfg or RerollConfig()
    stats = stats if stats is not None else RerollStats()
    plans = ("dp", "greedy") if cfg.strategy == "best" else (cfg.strategy,)
    best, cache = None, {}
    for plan in plans:
        st = RerollStats()
        out = _reroll_with(stmts, cfg, st, plan, cache)
        n = count_tokens(fmt_stmts(out)) if len(plans) > 1 else 0
        if best is None or n < best[0]:
            best = (n, out, st)
    _, out, st = best
    stats.loops += st.loops
    stats.geometric_loops += st.geometric_loops
    stats.rejected_templates += st.rejected_templates
    return out


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

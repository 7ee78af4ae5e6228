"""The search for loops in one straight-line segment (a run inside a basic block).

Every position offers candidates: for each later statement with the same
skeleton (holes.py), the distance is a body size `p`; the copies that follow
are counted while skeletons repeat and every hole keeps to its model (linear,
or geometric where three copies disagree with linear). Each candidate, with its
longest run and that run shortened by up to two copies, is scored by the tokens
it saves: the copies minus the header, copy 0 and what its VarExprs cost. The
scores are exact, so a plan never makes the text longer.

Two plans choose among them: `dp`, the non-overlapping set that saves the most
(a dynamic programme from the end of the segment), and `greedy`, PtxDec's
top-down order (the best loop at each position unless one starting within its
first body saves more). Candidates are memoised per position, so running both
plans on the same segment costs one search.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

from .expand import expand_stmts
from .holes import GEOMETRIC_KINDS, cost, fit, linear_cost, predict, split, template, vars_in
from .syntax import Loop, Stmt

HEADER_TOKENS = 10  # for .size .N i in range ( c ) :
_VARS = ("i", "j", "k", "l", "m", "n")


def _fresh_var(stmts, avoid=()) -> str:
    used = vars_in(stmts) | set(avoid)
    for k in range(100):
        for v in _VARS:
            name = v if k == 0 else f"{v}{k}"
            if name not in used:
                return name
    raise RuntimeError("no fresh loop variable")


@dataclass
class _Cand:
    gain: int
    pos: int
    period: int
    copies: int
    deltas: list       # per body statement, per hole: the linear step
    geo: list | None   # per body statement, per hole: models (holes.py), if not all linear
    tables: bool = False  # some hole is a table `[v0,v1,...][i]` (geo holds the models)

    @property
    def models(self) -> list:
        return self.geo or [tuple(("lin", d) for d in dk) for dk in self.deltas]


class Segment:
    """One straight-line run of statements, its skeletons, hole values and token counts.

    `cfg` is a reroll.RerollConfig (max_period, max_candidates, geometric); `toks` the
    tokens of each statement as printed; `free` the variables of enclosing loops."""

    def __init__(self, items: list[Stmt], cfg, toks: list[int], free: tuple = ()):
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
        self.cum = [0]
        for t in toks:
            self.cum.append(self.cum[-1] + t)
        # (pos, period) -> (copies, deltas) of all-linear runs, reused by pos - period
        self.linear: dict[tuple[int, int], tuple[int, list]] = {}
        self.memo: dict[int, list[_Cand]] = {}  # shared by the plans (see reroll_stmts)

    def with_config(self, cfg) -> "Segment":
        """The same segment (skeletons, values, linear runs shared) searched under `cfg`."""
        other = object.__new__(Segment)
        other.__dict__.update(self.__dict__)
        other.cfg, other.memo = cfg, {}
        return other

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

    def _may_be_geometric(self, pos: int, p: int, deltas: list) -> bool:
        """Do the holes that break the linear model in copy 2 all allow a geometric one?"""
        vals, kinds = self.vals, self.kinds
        for k in range(p):
            for h, (a, d, e) in enumerate(zip(vals[pos + k], deltas[k], vals[pos + 2 * p + k])):
                if e != a + 2 * d and kinds[pos + k][h] not in GEOMETRIC_KINDS:
                    return False
        return True

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
            if cum[pos + cs * p] - cum[q] <= HEADER_TOKENS:
                found.append((p, cs))
                continue
            deltas = [tuple(b - a for a, b in zip(v0, v1)) for v0, v1 in zip(vals[pos:q], vals[q:q + p])]
            models = None  # all linear, given by deltas
            nxt = self.linear.get((q, p))
            if nxt is not None and nxt[1] == deltas:
                c = nxt[0] + 1  # the run found one period later, plus this copy
            else:
                c = self._copies_linear(pos, p, deltas)
                if c == 2 and cfg.geometric and cs > 2 and self._may_be_geometric(pos, p, deltas):
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
            fixed = HEADER_TOKENS + cum[q] - cum[pos]
            if models is None and cfg.tables and cs > c:
                self._table_options(pos, p, deltas, c, cs, fixed, out)
            if cum[pos + c * p] - cum[pos] <= fixed:
                continue  # not even the longest run pays for its header
            if models is None:
                kinds = self.kinds
                fixed += sum(linear_cost(kd, d) for k in range(p) for kd, d in zip(kinds[pos + k], deltas[k]) if d)
            else:
                fixed += sum(cost(kd, v, m, sh) for k in range(p) for kd, v, m, sh in
                             zip(self.kinds[pos + k], vals[pos + k], models[k], self.shapes[pos + k]))
            for cc in range(c, max(1, c - 3), -1):
                gain = cum[pos + cc * p] - cum[pos] - fixed
                if gain > 0:
                    out.append(_Cand(gain, pos, p, cc, deltas, models))
        return out

    def _table_options(self, pos: int, p: int, deltas: list, c: int, cs: int, fixed: int,
                       out: list) -> None:
        """Runs longer than the linear one (`c` copies) up to the skeleton's run (`cs`): each
        hole that leaves its linear model within the run becomes a table of its values, one
        per copy (`%r([8,12,5,17,20][i])`). Scored exactly like the linear candidates; the
        best few run lengths with a positive gain are offered."""
        cmax = min(cs, self.cfg.max_table)
        if cmax <= c:
            return
        vals, kinds, cum = self.vals, self.kinds, self.cum
        base = vals[pos:pos + p]
        # the linear model restarting after c copies is a nested unroll: the next pass
        # folds these runs into an outer loop, shorter than one table over all of them
        if cs >= 2 * c and all(vals[pos + (c + t) * p + k] == tuple(a + t * d for a, d in zip(vals[pos + c * p + k], deltas[k]))
                               for t in range(1, c) for k in range(p)):
            return
        # for each hole: copies it keeps to its linear model (>= c), its linear cost
        holes = [(k, h) for k in range(p) for h in range(len(base[k]))]
        lin = {kh: linear_cost(kinds[pos + kh[0]][kh[1]], deltas[kh[0]][kh[1]]) for kh in holes}
        live = set(holes)
        leaves: dict[int, list] = {}   # copy index -> holes that leave their model there
        left: dict[tuple, int] = {}
        for t in range(c, cmax):
            s0 = pos + t * p
            for kh in list(live):
                k, h = kh
                if vals[s0 + k][h] != base[k][h] + t * deltas[k][h]:
                    live.discard(kh)
                    leaves.setdefault(t, []).append(kh)
                    left[kh] = t

        tabled: list = []
        # per tabled hole: table cost minus 2 per value (added per copy below)
        lin_sum, tab_fixed, negs = sum(lin.values()), 0, 0
        best: list[tuple[int, int]] = []
        for cc in range(c + 1, cmax + 1):
            t = cc - 1  # the copy added
            for kh in leaves.get(t, ()):
                k, h = kh
                tabled.append(kh)
                lin_sum -= lin[kh]
                kd = kinds[pos + k][h]
                if self.shapes[pos + k][h] != ((), (), ()):
                    tab_fixed += 10**6  # tables on folded holes: not offered (rare)
                tab_fixed += 4 + (2 if kd in ("reg", "sym") else 1 if kd == "off0" else
                                  -(2 if base[k][h] < 0 else 1))
                negs += sum(vals[pos + u * p + k][h] < 0 for u in range(t))
            negs += sum(vals[pos + t * p + k][h] < 0 for k, h in tabled)
            if not tabled:
                continue
            cost = lin_sum + tab_fixed + 2 * cc * len(tabled) + negs
            gain = cum[pos + cc * p] - cum[pos] - fixed - cost
            if gain > 0:
                best.append((gain, cc))
        for gain, cc in sorted(best, reverse=True)[:3]:
            models = [tuple(("tab", tuple(vals[pos + u * p + k][h] for u in range(cc)))
                            if left.get((k, h), cmax) < cc else ("lin", deltas[k][h])
                            for h in range(len(base[k]))) for k in range(p)]
            out.append(_Cand(gain, pos, p, cc, deltas, models, tables=True))

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

    def roll(self, stats, strategy: str = "dp") -> list[Stmt]:
        """The segment with the plan's loops applied (each checked by expansion first)."""
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
                    stats.geometric_loops += b.geo is not None and not b.tables
                    stats.table_loops += b.tables
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

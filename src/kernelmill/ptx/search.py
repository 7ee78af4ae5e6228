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
from dataclasses import dataclass, replace
from itertools import accumulate, chain, compress
from operator import lshift, sub

from .expand import expand_stmts
from .first_copy import found, models as first_models, offer as offer_first
from .holes import GEOMETRIC_KINDS, REG_TABLE_BIAS, TABLE_BIAS, cost, fit, linear_cost, predict, split, template, vars_in
from .syntax import Block, Loop, Stmt

HEADER_TOKENS = 10  # for .size .N i in range ( c ) :
# _BELOW[m]: bytes.translate's table that maps a byte below m to 1, others to 0 (_Runs.short)
_BELOW = [b"\x01" * m + bytes(256 - m) for m in range(256)]
_VARS = ("i", "j", "k", "l", "m", "n")


def _fresh_var(stmts, avoid=(), shapes=None) -> str:
    """A loop variable that `stmts` do not use; `shapes`: their holes.split shapes, where
    the variables of all but loops and scopes are (holes.shape), read instead of a walk."""
    if shapes is None:
        used = vars_in(stmts) | set(avoid)
    else:
        used = set(avoid)
        for s, shs in zip(stmts, shapes):
            if isinstance(s, (Loop, Block)):
                used |= vars_in([s])
                continue
            for terms, shifts, tables in shs:
                used.update(v for v, _ in terms)
                used.update(x[2] for x in shifts)
                used.update(t[1] if t[0] == "!" else t[0] for t in tables)  # (holes.shape's pinned values)
    for k in range(100):
        for v in _VARS:
            name = v if k == 0 else f"{v}{k}"
            if name not in used:
                return name
    raise RuntimeError("no fresh loop variable")


@dataclass(slots=True)
class _Cand:
    gain: int
    pos: int
    period: int
    copies: int
    geo: list | None   # per body statement, per hole: models (holes.py), if not all linear
    tables: bool = False  # some hole is a table `[v0,v1,...][i]`
    pre: object = None    # a loop built elsewhere (whole_statements.offer): period is its span, copies 1
    first: dict | None = None  # copy 0 has first values: first_copy.offer's rows (first_copy.models)


def _first_cand(gain: int, pos: int, p: int, copies: int, rows: dict) -> _Cand:
    return _Cand(gain, pos, p, copies, None, first=rows)


def float_holes(kinds: list) -> dict[int, list[int]]:
    """Statement index -> the indices of its float-literal holes (holes.FLOATHEX), where any."""
    return {x: [h for h, kd in enumerate(k) if kd == "fimm"] for x, k in enumerate(kinds) if "fimm" in k}


def pack_values(vals: list) -> list[int]:
    """Each statement's hole values as one int, `sum(v << (w * h))`, with w wide enough that
    a difference of two steps (each value within 4M, M the largest |value|) is 0 only where
    every value's is: `sum(e_h << (w * h)) == 0` with |e_h| < 2**(w-1) holds only for all
    e_h == 0. So steps (differences of these ints) compare as ints (_Runs)."""
    w = max(map(abs, chain.from_iterable(vals)), default=0).bit_length() + 4
    shifts = range(0, w * max(map(len, vals), default=0), w)  # w * h for hole h (map stops at the shorter)
    return [sum(map(lshift, vs, shifts)) for vs in vals]


def kind_numbers(kinds: list) -> list[int]:
    """Each statement's hole kinds (a tuple) as a number, equal where the tuples are."""
    ids: dict = {}
    return [ids.setdefault(k, len(ids)) for k in kinds]


class _Runs:
    """For one body size p, per statement x of a segment: how the copies x, x+p, x+2p, ...
    continue. `lin[x]`: copies whose holes keep to the linear model of the first two
    (`step[x]`, None where the skeleton changes at x+p; lin 1 then). A loop of body p at
    `pos` has `min(lin[pos:pos+p])` linear copies.

    A step is one int, not a tuple per hole: `packed` (pack_values) writes each statement's
    hole values as one int, so x+p less x is the step, and two steps are equal when the ints
    are (a tuple made and compared per statement and body size was ~30% of fill under
    line_profiler, session 13);
    `delta(x)` gives the tuple where one is read. Filled on demand (`fill`): only where
    a body repeats, each statement once per body size, however many positions read it
    (issue 44: a table over the whole segment read 2.5x the statements).

    `low` is lin as bytes, min(lin[x], 255): a window's statements of a given lin, or of a
    lin below a bound, are found by bytearray.find/count/translate at C speed, not by a
    slice of ints compared one by one in Python (`short`, first_copy.offer; the window
    scans were ~15% of the big unit's reroll, session 21)."""

    __slots__ = ("lin", "low", "step", "_lc", "_sk", "_vals", "_kinds", "_flt", "_p", "_costs", "_ng", "_leave", "_ka", "_kb",
                 "_packed", "_kid")

    def __init__(self, sk: list, vals: list, kinds: list, p: int, flt: dict | None = None,
                 costs: dict | None = None, packed: list | None = None, kid: list | None = None):
        n = len(sk)
        self._packed = pack_values(vals) if packed is None else packed
        # hole kinds' number -> step -> linear_cost sum; `kid`: each statement's hole kinds numbered
        # (kind_numbers; a number, not the tuple, is hashed per statement and body size, and no
        # (number, step) pair is made and hashed)
        self._costs = {} if costs is None else costs
        self._kid = kind_numbers(kinds) if kid is None else kid
        self.lin, self.step, self._lc = [0] * n, [None] * n, [0] * n  # lin 0: not filled
        self.low = bytearray(n)
        # statements lo..hi-1 known by fill (one interval): the search asks the windows of one
        # body size at falling positions, so a window is mostly known and only its new end is
        # looked for, not the whole window counted (86% of the big unit's 258k fills touch
        # the known interval, session 13)
        self._ka = self._kb = 0
        self._ng = bytearray(n)  # not_geometric: per statement, 0 until asked, then 1 (no) or 2 (yes)
        self._leave: dict[int, tuple] = {}  # leaves: statement -> (copies scanned, its leaving holes)
        self._sk, self._vals, self._kinds, self._p = sk, vals, kinds, p
        # statements with float literals (holes.FLOATHEX; `flt`: position -> their holes): a
        # literal that changes from x to x+p ends x's linear run at x itself, so only a table
        # (_table_options) can hold it
        self._flt = float_holes(kinds) if flt is None else flt

    def fill(self, lo: int, hi: int) -> None:
        """Make lin and step of statements lo..hi-1 known (and of the copies they depend on),
        and the cost of their linear terms (lcost)."""
        a, b = self._ka, self._kb
        if a <= lo and hi <= b:
            return
        lin, low = self.lin, self.low
        if a <= hi and lo <= b and a < b:  # touches the known interval: the rest of the window
            if lo == a - 1 and hi <= b:  # (the window one statement further down: the search's way)
                todo = () if lin[lo] else (lo,)
                self._ka = lo
            else:
                todo = found(low, 0, lo, a) + found(low, 0, b, hi)
                self._ka, self._kb = min(a, lo), max(b, hi)
        else:
            todo = found(low, 0, lo, hi)
            if lo < a or a == b:  # a window further down (the search's way): known from here on
                self._ka, self._kb = lo, hi
        sk, flt, step, p, packed = self._sk, self._flt, self.step, self._p, self._packed
        lc, costs, kinds, kid = self._lc, self._costs, self._kinds, self._kid
        n = len(sk)
        for x in todo:
            if lin[x]:  # known since: a chain from before it passed here
                continue
            y = x  # the chain x, x+p, ..., y whose skeleton recurs p later, up to a known copy
            while True:
                z = y + p
                if z >= n or sk[y] != sk[z]:
                    lin[y] = low[y] = 1  # the skeleton's run ends here
                    y -= p
                    break
                if lin[z]:
                    break
                y = z
            top = y
            for y in range(top, x - 1, -p):  # (from the top: each step's next is known)
                z = y + p
                d = step[y] = packed[z] - packed[y]
                by_step = costs.get(kid[y])  # few distinct: the segment's runs share them
                if by_step is None:
                    by_step = costs[kid[y]] = {}
                c = by_step.get(d)
                if c is None:
                    c = by_step[d] = sum(linear_cost(kd, v) for kd, v in zip(kinds[y], self.delta(y)) if v)
                lc[y] = c
                r = lin[y] = (1 if flt and y in flt and any(self.delta(y)[h] for h in flt[y]) else
                              lin[z] + 1 if step[z] == d else 2)
                low[y] = min(r, 255)

    def not_geometric(self, lo: int, hi: int) -> bool:
        """Does a hole of statements lo..hi-1 break its linear model at copy 2 (x+2p) and
        have a kind that allows no geometric one (GEOMETRIC_KINDS)? Asked only where three
        copies of the body follow (filled). Kept per statement: a statement is in p windows,
        and asking each window's holes was ~8% of the big unit's reroll (cProfile, session 13)."""
        ng, lin, vals, kinds, p = self._ng, self.lin, self._vals, self._kinds, self._p
        for x in found(ng, 0, lo, hi):
            # lin >= 3: copy 2 keeps the step of copies 0-1, so no hole breaks there
            ng[x] = 2 if lin[x] < 3 and any(e != a + 2 * d and kd not in GEOMETRIC_KINDS for a, d, e, kd in
                                            zip(vals[x], self.delta(x), vals[x + 2 * p], kinds[x])) else 1
        return ng.find(2, lo, hi) >= 0

    def leaves(self, x: int, cmax: int, shapes: list) -> list:
        """(hole, copy, tokens, signed) for each hole of statement x that leaves the linear
        model of copies 0-1 at a copy before `cmax` (its first such copy; a float literal that
        changes: copy 1), its tokens as a table less 2 per value, and whether it may hold a
        negative number (a `-` token per negative value). Copies 0..cmax-1 of x have its
        skeleton (the caller's run). Kept per statement: _table_options asks it of each body
        holding x (p times per statement; _table_options, scanning them per window, was 28%
        of the big unit's reroll under cProfile, session 13)."""
        e = self._leave.get(x)
        if e is not None and e[0] >= cmax:
            return e[1]
        vals, p, kd, d = self._vals, self._p, self._kinds[x], self.delta(x)
        b, r, out = vals[x], self.lin[x], []
        for h in range(len(b)):
            t = 1 if kd[h] == "fimm" and d[h] else next(
                (t for t in range(r, cmax) if vals[x + t * p][h] != b[h] + t * d[h]), None)
            if t is None:
                continue
            w = -linear_cost(kd[h], d[h]) + (10**6 if shapes[x][h] != ((), (), ()) else 0)  # folded: not offered
            # (scored as holes.table_cost scores them: TABLE_BIAS over the printed tokens)
            if kd[h] in ("reg", "sym", "psym"):  # numbers of names: never negative
                out.append((h, t, w + 1 + TABLE_BIAS + (REG_TABLE_BIAS if kd[h] == "reg" else 2), False))
            else:
                out.append((h, t, w + 1 + TABLE_BIAS + (1 if kd[h] == "off0" else -(2 if b[h] < 0 else 1)), True))
        self._leave[x] = (cmax, out)
        return out

    def least(self, lo: int, hi: int) -> int:
        """min(lin[lo:hi]) (filled): found in `low` where it is 1 or 2, as in most windows of the
        big unit (the body sizes that are multiples of a period, whose runs a table breaks)."""
        low = self.low
        return 1 if low.find(1, lo, hi) >= 0 else 2 if low.find(2, lo, hi) >= 0 else min(self.lin[lo:hi])

    def short(self, lo: int, hi: int, cmax: int) -> list[int]:
        """Statements of lo..hi-1 (filled) whose linear run ends before `cmax` copies."""
        if cmax > 255:
            return list(compress(range(lo, hi), map(cmax.__gt__, self.lin[lo:hi])))
        return found(self.low[lo:hi].translate(_BELOW[cmax]), 1, 0, hi - lo, lo)

    def delta(self, x: int) -> tuple:
        """Per hole of statement x: its step to copy x+p (where x has a step)."""
        return tuple(map(sub, self._vals[x + self._p], self._vals[x]))

    def lcost(self, lo: int, hi: int) -> int:
        """Tokens the linear terms of statements lo..hi-1 cost (holes.linear_cost); filled."""
        return sum(self._lc[lo:hi])


class Segment:
    """One straight-line run of statements, its skeletons, hole values and token counts.

    `cfg` is a reroll.RerollConfig (max_period, max_candidates, geometric); `toks` the
    tokens of each statement as printed; `free` the variables of enclosing loops;
    `splits` (optional) each statement's holes.split, when the caller has them (the key
    may be any value standing for it one to one: reroll._Known numbers them)."""

    def __init__(self, items: list[Stmt], cfg, toks: list[int], free: tuple = (), splits=None):
        self.items, self.cfg, self.free = items, cfg, free
        if splits is None:
            splits = [split(s) for s in items]
        keys, vals, kinds, shapes = zip(*splits) if splits else ((), (), (), ())
        self.vals, self.kinds, self.shapes = list(vals), list(kinds), list(shapes)
        ids: dict = {}
        self.sk = [ids.setdefault(key, len(ids)) for key in keys]
        self.where: dict[int, list[int]] = {}
        for k, sid in enumerate(self.sk):
            self.where.setdefault(sid, []).append(k)
        # the skeletons as a string, one character each: whether (and how often) a body
        # repeats is a comparison of two slices at C speed (_copies_by_skeleton)
        self.text = "".join(map(chr, self.sk))
        self._last_copies: dict[int, tuple[int, int]] = {}  # body size -> (position, copies)
        self.cum = list(accumulate(toks, initial=0))
        self.flt = float_holes(self.kinds)
        self.runs: dict[int, _Runs] = {}  # body size -> its runs (independent of cfg, shared)
        self.packed: list | None = None  # pack_values(vals), made with the first runs
        self.costs: dict[int, dict] = {}  # the runs' linear costs by hole kinds' number, then step
        self.kid: list | None = None  # kind_numbers(kinds), made with the first runs
        self.memo: dict[int, list[_Cand]] = {}  # shared by the plans (see reroll_stmts)
        self.made: dict[int, Loop | None] = {}  # id(candidate) -> its checked loop (shared)
        self.built: dict[int, Loop] = {}  # id(candidate) -> its loop, unchecked (roll(check=False))
        self.tabled: Segment | None = None  # the same search with tables: its options, filtered
        self.first_rows: dict = {}  # (statement, body size) -> first_copy._row (any config)

    def with_config(self, cfg) -> "Segment":
        """The same segment (skeletons, values, runs, made loops shared) searched under `cfg`."""
        other = object.__new__(Segment)
        other.__dict__.update(self.__dict__)
        other.cfg, other.memo, other.tabled = cfg, {}, None
        # without tables the options are those with tables, less the table candidates
        # (_options offers them last for each body size and changes nothing else); without
        # tables or presence, less the loops offered (whole_statements.offer)
        if (self.cfg.tables >= cfg.tables and self.cfg.presence >= cfg.presence and self.cfg.firsts >= cfg.firsts
                and replace(cfg, tables=self.cfg.tables, presence=self.cfg.presence, firsts=self.cfg.firsts) == self.cfg):
            other.tabled = self
        return other

    def _runs(self, p: int) -> _Runs:
        r = self.runs.get(p)
        if r is None:
            if self.packed is None:
                self.packed, self.kid = pack_values(self.vals), kind_numbers(self.kinds)
            r = self.runs[p] = _Runs(self.sk, self.vals, self.kinds, p, self.flt, self.costs, self.packed, self.kid)
        return r

    def _copies_by_skeleton(self, pos: int, p: int) -> int:
        """Copies of the body sk[pos:pos+p] that follow one another from pos (2 or more:
        the caller has seen it repeat once). The search goes from the end of the segment:
        where it had the body at pos+1, there are as many copies here, or one more."""
        text, end = self.text, len(self.sk) - pos
        body = text[pos:pos + p]
        last = self._last_copies.get(p)
        c = last[1] if last is not None and last[0] == pos + 1 else 2
        while (c + 1) * p <= end and text.startswith(body, pos + c * p):
            c += 1
        self._last_copies[p] = (pos, c)
        return c

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

    def options(self, pos: int) -> list[_Cand]:
        """Loops that may start at `pos`: (body size, copies) with a positive gain."""
        m = self.memo.get(pos)
        if m is None:
            if self.tabled is None:
                m = self.memo[pos] = self._options(pos)
            else:  # (the kinds of candidate this config keeps: offered loops, tables, first values)
                pre, tab, first = self.cfg.presence and self.cfg.tables, self.cfg.tables, self.cfg.tables and self.cfg.firsts
                m = self.memo[pos] = [c for c in self.tabled.options(pos) if (pre or c.pre is None) and
                                      (tab or not c.tables) and (first or c.first is None)]
        return m

    def _options(self, pos: int) -> list[_Cand]:
        n, vals, cfg, cum = len(self.items), self.vals, self.cfg, self.cum
        occ = self.where[self.sk[pos]]
        j = bisect_right(occ, pos)
        out: list[_Cand] = []
        # a multiple of a period whose run already covers two of its bodies is the
        # same loop with a longer body: never better, so not searched
        blocked: set[int] = set()
        all_runs, max_p = self.runs, min(cfg.max_period, (n - pos) // 2)
        text = self.text
        for q in occ[j:j + cfg.max_candidates]:
            p = q - pos
            if p > max_p:
                break
            if p in blocked:
                continue
            # the body must repeat, or no run starts here (cs below would be 1): one comparison of
            # two slices at C speed (nine in ten of the (position, body size) pairs stop here; a
            # test of the body's second and last statements first cost more than it saved: the
            # big unit's reroll -3.5% without it, session 21)
            if not text.startswith(text[pos:q], q):
                continue
            cs = self._copies_by_skeleton(pos, p)
            # they bound the run: skip bodies that cannot pay
            if cum[pos + cs * p] - cum[q] <= HEADER_TOKENS:
                if cs >= 4:
                    blocked.update(range(2 * p, min(cs // 2 * p, max_p) + 1, p))
                continue
            runs = all_runs.get(p) or self._runs(p)
            runs.fill(pos, q)
            c = runs.least(pos, q)
            models = None  # all linear (_models: the steps of copies 0-1)
            if c == 2 and cfg.geometric and cs > 2 and not runs.not_geometric(pos, q):
                geo = [tuple(fit(kd, a, b, e) for kd, a, b, e in
                             zip(self.kinds[pos + k], vals[pos + k], vals[q + k], vals[q + p + k]))
                       for k in range(p)]
                if any(m[0] != "lin" for mk in geo for m in mk):
                    c3 = self._copies(pos, p, geo, 2)
                    if c3 > 2:
                        c, models = c3, geo
            if c >= 4:  # (fewer than 4 copies block nothing)
                blocked.update(range(2 * p, min(c // 2 * p, max_p) + 1, p))
            fixed = HEADER_TOKENS + cum[q] - cum[pos]
            lw = runs.lcost(pos, q)  # (asked here and by _table_options: once)
            if models is None and cfg.tables and cs > c:
                self._table_options(pos, p, c, cs, fixed, out, runs, lw)
                if c == 2 and cs > 2 and cfg.firsts:  # copy 0 off the model of copies 1..: first values (first_copy.py)
                    offer_first(self, runs, pos, p, c, cs, out, _first_cand)
            if cum[pos + c * p] - cum[pos] <= fixed:
                continue  # not even the longest run pays for its header
            if models is None:
                fixed += lw
            else:
                fixed += sum(cost(kd, v, m, sh) for k in range(p) for kd, v, m, sh in
                             zip(self.kinds[pos + k], vals[pos + k], models[k], self.shapes[pos + k]))
            for cc in range(c, max(1, c - 3), -1):
                gain = cum[pos + cc * p] - cum[pos] - fixed
                if gain > 0:
                    out.append(_Cand(gain, pos, p, cc, models))
        return out

    def _table_options(self, pos: int, p: int, c: int, cs: int, fixed: int,
                       out: list, runs: _Runs | None = None, lw: int | None = None) -> None:
        """Runs longer than the linear one (`c` copies) up to the skeleton's run (`cs`): each
        hole that leaves its linear model within the run becomes a table of its values, one
        per copy (`%r([8,12,5,17,20][i])`). Scored exactly like the linear candidates; the
        best few run lengths with a positive gain are offered."""
        cmax = min(cs, self.cfg.max_table)
        if cmax <= c:
            return
        vals, cum = self.vals, self.cum
        runs = runs or self._runs(p)
        if lw is None:  # (the linear terms' tokens of copy 0, runs.lcost(pos, pos + p))
            lw = runs.lcost(pos, pos + p)
        # the linear model restarting after c copies is a nested unroll: the next pass
        # folds these runs into an outer loop, shorter than one table over all of them
        s = pos + c * p
        if c >= 2 and cs >= 2 * c:
            # (copy c is known: fill(pos, pos + p) follows each statement's chain of copies while
            # its skeleton repeats, and copies 0..cs-1 share the body's skeletons)
            # (only where the inner run pays for its header: else no inner loop is made to
            # fold, and the table is the one loop there is; shuffled parameter loads, session 15)
            # (the token test first: it fails in 69% of the big unit's windows that get here, the steps' in the rest)
            if (cum[s] - cum[pos] > fixed + lw and runs.step[s:s + p] == runs.step[pos:pos + p]
                    and min(runs.lin[s:s + p]) >= c):
                return
        # each hole that leaves its linear model before cmax, at the copy t where it does
        # (runs.leaves, with its tokens as a table): from cc = t + 1 copies on it is a table.
        # Per copy count cc, the holes tabled there (tab) and their tokens less 2 per value
        # (add); t >= c, so nothing is tabled below c + 1. Only statements whose linear run
        # ends before cmax have such holes
        n = cmax - c
        tab, add, signed = [0] * n, [0] * n, []  # index cc - c - 1; signed: may hold a negative value
        for x in runs.short(pos, pos + p, cmax):
            for h, t, w, sg in runs.leaves(x, cmax, self.shapes):
                if t < cmax:
                    tab[t - c] += 1
                    add[t - c] += w
                    if sg:
                        signed.append((t, x, h))
        if not any(tab):
            return
        tab, add = list(accumulate(tab)), list(accumulate(add))
        # gain at cc copies: the copies after the first, less the header, copy 0 and the linear
        # terms (fixed, lcost), less the tables: their holes' tokens and 2 per value. A
        # comprehension over cc, not a loop adding one copy at a time (the per-copy loop was a
        # third of this function on the big unit, session 13)
        base = cum[pos] + fixed + lw
        spans = cum[pos + (c + 1) * p:pos + cmax * p + 1:p]
        if not signed:  # (the usual case: the gains and the positive ones in one comprehension)
            best = [(g, cc) for cc, v, tn, a in zip(range(c + 1, cmax + 1), spans, tab, add)
                    if tn and (g := v - base - a - 2 * cc * tn) > 0]
        else:
            gains = [v - base - a - 2 * cc * tn for cc, v, tn, a in zip(range(c + 1, cmax + 1), spans, tab, add)]
            # the copies' negative values in tabled holes, each a `-` token: at cc copies those of
            # copies 0..cc-1 of each hole tabled by then (rare: immediates and offsets)
            for t, x, h in signed:
                neg = sum(vals[x + u * p][h] < 0 for u in range(t))
                for u in range(t, cmax):
                    neg += vals[x + u * p][h] < 0
                    gains[u - c] -= neg
            best = [(g, cc) for cc, g, tn in zip(range(c + 1, cmax + 1), gains, tab) if tn and g > 0]
        for gain, cc in sorted(best, reverse=True)[:3]:
            out.append(_Cand(gain, pos, p, cc, None, True))

    def _models(self, b: _Cand) -> list:
        """Per body statement, per hole: the model the template writes."""
        if b.geo is not None:
            return b.geo
        vals, p, pos, runs = self.vals, b.period, b.pos, self._runs(b.period)
        if b.first is not None:
            return first_models(b.first, runs, pos, p)
        if not b.tables:
            return [tuple(("lin", v - u) for u, v in zip(vals[x], vals[x + p])) for x in range(pos, pos + p)]
        return [tuple(("tab", tuple(vals[pos + u * p + k][h] for u in range(b.copies)))
                      if left.get(h, b.copies) < b.copies else ("lin", vals[pos + p + k][h] - vals[pos + k][h])
                      for h in range(len(vals[pos + k])))
                for k, left in enumerate({h: t for h, t, _, _ in runs.leaves(x, b.copies, self.shapes)}
                                         for x in range(pos, pos + p))]

    def _plan_dp(self) -> list[_Cand | None]:
        """The non-overlapping loops that save the most tokens in this segment."""
        n = len(self.items)
        best = [0] * (n + 1)       # most tokens saved in items[pos:]
        choice: list[_Cand | None] = [None] * (n + 1)
        options = self.options
        for pos in range(n - 1, -1, -1):
            b = best[pos + 1]
            for c in options(pos):
                v = c.gain + best[pos + c.period * c.copies]
                if v > b:
                    b, choice[pos] = v, c
            best[pos] = b
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

    def roll(self, stats, strategy: str = "dp", check: bool = True) -> list[Stmt]:
        """The segment with the plan's loops applied, each checked by expansion first
        (`check`), or not: then the caller checks the whole function (reroll_function)."""
        n = len(self.items)
        choice = self._plan_dp() if strategy == "dp" else self._plan_greedy()
        out: list[Stmt] = []
        pos = 0
        while pos < n:
            b = choice[pos]
            if b is not None:
                loop = self._checked(b) if check else self._built(b)
                if loop is not None:
                    out.append(loop)
                    stats.loops += 1
                    stats.geometric_loops += b.geo is not None and not b.tables
                    stats.table_loops += b.tables
                    stats.first_loops += b.first is not None
                    pos += b.period * b.copies
                    continue
                stats.rejected_templates += 1
            out.append(self.items[pos])
            pos += 1
        return out

    def _checked(self, b: _Cand) -> Loop | None:
        """The candidate's loop if it expands to the statements it replaces (once per
        candidate: the plans and the table-free twin share candidates)."""
        key = id(b)  # candidates live in the memos as long as this segment
        if key not in self.made:
            loop = self._make(b)
            self.made[key] = loop if self._same(loop, self.items[b.pos:b.pos + b.period * b.copies]) else None
        return self.made[key]

    def _built(self, b: _Cand) -> Loop:
        loop = self.built.get(id(b))
        if loop is None:
            loop = self.built[id(b)] = self._make(b)
        return loop

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
        # copies share their skeleton, and a skeleton holds each hole's loop variables
        # (holes.shape) and each inner loop's: the first body names them all
        var = _fresh_var(self.items[pos:pos + p], self.free, self.shapes[pos:pos + p])
        models = self._models(b)
        body = tuple(template(self.items[pos + k], self.vals[pos + k], models[k], var)
                     for k in range(p))
        return Loop(var, 0, b.copies, 1, body)

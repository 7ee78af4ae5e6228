"""Loops whose copy 0 leaves the linear model that copies 1, 2, ... keep (session 16).

The search's linear model is the step from copy 0 to copy 1. Where copy 0 differs (an
accumulator's first source is what the code before left, `fma %f29, ..., %f111` then
`%f30`, `%f32`; a register nvcc numbered before the copies' own), the run of linear copies
is 1 long, and only a table could hold the hole. Here the model is the step from copy 1 to
copy 2, and each hole of copy 0 off it gets a first value: `%f28+i*2!111`
(syntax.VarExpr.pins). Offered with the other candidates and scored by a token formula
(`first_cost`, held to the printed template's count by a property test); only statements
whose step from copy 0 differs are looked at (`runs.step`).
"""

from __future__ import annotations


from .holes import linear_cost, template
from .lexer import count_tokens
from .syntax import fmt_stmt

# hole kinds that take a first value: numbers printed as they are (never labels, parameters,
# float literals); a hole that is already an expression (an inner loop's) does not: its first
# value would replace the other variables' terms too
_KINDS = frozenset({"reg", "imm", "off", "off0", "vreg", "vimm"})
_NO_SHAPE = ((), (), ())
HEADER_TOKENS = 10  # (search.HEADER_TOKENS)


def first_row(seg, x: int, p: int) -> tuple[tuple | None, bool]:
    """The models of body statement x (copy 0 at x; copies 1, 2 at x+p, x+2p, sharing its
    skeleton): per hole ("lin", d) from the step of copies 1-2, or ("first", d, base) where copy
    0 is off that model; None where a hole off it cannot take a first value. And whether the
    row needs a fourth copy: any three values fit a first value and a step, so where a hole's
    step from copy 0 to 1 is the smaller, three copies read better as the last one off
    (`[13,17,1]`, a chain's result in a low register) and are left to a table (as
    firsts.first_form does)."""
    kinds, shape = seg.kinds[x], seg.shapes[x]
    row, weak = [], False
    for h, (a, b, c) in enumerate(zip(seg.vals[x], seg.vals[x + p], seg.vals[x + 2 * p])):
        d = c - b
        if a == b - d:
            row.append(("lin", d))
        elif kinds[h] in _KINDS and shape[h] == _NO_SHAPE:
            row.append(("first", d, b - d))
            weak = weak or abs(d) >= abs(b - a)
        else:
            return None, False
    return tuple(row), weak


def first_cost(kind: str, v0: int, base: int, d: int) -> int | None:
    """Tokens a first value's hole prints over copy 0's plain hole (None: not counted here).
    `%f1` -> `%f3+i*3!1` (`%f(3!1)` without a term or with a negative base); `5` -> `3+i!5`;
    `+5` -> `+3+i!5`; an absent offset `[%r2]` -> `[%r2+3+i!0]`."""
    neg = base < 0
    if kind == "reg":
        return linear_cost(kind, d) + (2 if d and not neg else 5 + neg)
    if kind in ("imm", "off"):
        return linear_cost(kind, d) + 2 + neg
    if kind == "off0":
        return linear_cost("off", d) + 4 + neg
    return None


def _extra(kinds: tuple, v0: tuple, row: tuple) -> int | None:
    """Tokens the template of one statement prints over it (the models of `first_row`)."""
    n = 0
    for kd, a, m in zip(kinds, v0, row):
        if m[0] == "lin":
            n += linear_cost(kd, m[1]) if m[1] else 0
        else:
            c = first_cost(kd, a, m[2], m[1])
            if c is None:
                return None
            n += c
    return n


def offer(seg, runs, pos: int, p: int, c: int, cs: int, out: list, cand) -> None:
    """Candidates of 3 copies or more, up to the linear run of copies 1.. (`runs.lin` at copy
    1), where that is longer than the linear run from copy 0 (`c`); appended to `out` as
    `cand(gain, pos, p, copies, rows)` (rows: body index -> models, where copy 0 is off). Only the statements whose step from copy 0 differs
    from the step of copies 1-2 (`runs.step`, one int each) hold first values: the others
    are linear from copy 0, and their tokens are the linear run's (`runs.lcost`)."""
    # copy 0 off the model of copies 1-2 breaks the linear run at copy 2: c == 2. Where c > 2,
    # copies 1.. keep the step of copies 0-1 as long as copy 0 does (runs.lin), and none is off
    # (the caller asks only where c == 2)
    if c != 2:
        return
    q = pos + p
    # copies 1, 2 are known: fill(pos, q) follows each statement's chain x, x+p, ... while the
    # skeleton repeats (a known statement's next copy is known), and the body repeats here
    low = runs.low
    n = 1 + runs.least(q, q + p)
    if n <= 2:
        return
    cum = seg.cum
    span = cum[pos + n * p] - cum[pos]
    # the template is copy 0 with the linear terms of the steps from copy 1, and 2 tokens more
    # at least per statement with a first value (bounds first: most bodies stop here)
    cost = HEADER_TOKENS + cum[q] - cum[pos] + runs.lcost(q, q + p)
    if span <= cost + 2:
        return
    # the statements whose step from copy 0 differs from that of copies 1-2 are those whose linear
    # run from copy 0 is 2 long: each of copies 1.. has a run of 2 or more (n > 2), so where the
    # steps are equal lin[x] = lin[x+p] + 1 > 2, else 2 (a float literal's lin 1 would make c 1);
    # found at C speed (runs.low: lin as bytes)
    if span <= cost + 2 * low.count(2, pos, q):
        return
    rows, weak, known, lc = {}, False, seg.first_rows, runs._lc
    for x in found(low, 2, pos, q):
        k = x - pos
        e = known.get((x, p))
        if e is None:  # (a statement is copy 0 of p windows: kept per segment)
            e = known[(x, p)] = _row(seg, x, p)
        row, w, extra = e
        if row is None:
            return
        rows[k], weak = row, weak or w
        cost += extra - lc[x + p]  # (runs.lcost of statement x + p)
    if not rows or (weak and n < 4):
        return
    for cc in range(n, max(c, 3 if weak else 2, n - 3), -1):
        gain = cum[pos + cc * p] - cum[pos] - cost
        if gain > 0:
            out.append(cand(gain, pos, p, cc, rows))


def found(buf: bytearray, v: int, lo: int, hi: int, base: int = 0) -> list[int]:
    """Indices (plus `base`) of buf[lo:hi] that hold the byte v, found at C speed (bytearray.find):
    the search's windows overlap, so most of a window is known from the one before and the
    unknown entries are few (used by search.py too)."""
    out = []
    k = buf.find(v, lo, hi)
    while k >= 0:
        out.append(k + base)
        k = buf.find(v, k + 1, hi)
    return out


def _row(seg, x: int, p: int) -> tuple:
    """(first_row's models and weakness, the tokens its template prints over statement x)."""
    row, weak = first_row(seg, x, p)
    if row is None:
        return None, False, 0
    extra = _extra(seg.kinds[x], seg.vals[x], row)
    if extra is None:  # (an expression hole: counted on the template)
        t = template(seg.items[x], seg.vals[x], row, "i")
        extra = count_tokens("\n".join(fmt_stmt(t))) - (seg.cum[x + 1] - seg.cum[x])
    return row, weak, extra


def models(rows: dict, runs, pos: int, p: int) -> list:
    """Every body statement's models for a candidate of `offer` (made when its loop is: most
    candidates are not chosen): `rows` where copy 0 is off, else linear from copy 0."""
    return [rows.get(k) or tuple(("lin", d) for d in runs.delta(pos + p + k)) for k in range(p)]

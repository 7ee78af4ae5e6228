"""Copies of unequal length between repeats of one statement, aligned (issue 44 item 1, session 14).

An unrolled grid-stride loop (`#pragma unroll 4` over `i += stride`), a pointer walk, or an
accumulator chain: nvcc schedules the index arithmetic of the copies where it likes, so one copy
holds two `add.s32` of the index chain, the next one, the first copy computes the address the
others step from. No body repeats statement for statement and there is no label between the
copies (aligned.py's case), yet one statement, the *anchor* (a load, an `fma`), is in every copy
once.

Here the copies are cut at consecutive repeats of an anchor's skeleton, and aligned by their
statements' skeletons (aligned._merge: the longest common subsequence), so a statement some
copies lack gets a presence guard (presence.py). The last copy, which no anchor closes, is cut
where it stops matching. The loop is kept where it expands to the statements it replaces and is
shorter; runs of copies alike statement for statement are left to the ordinary search.
"""

from __future__ import annotations

from .aligned import _merge
from .presence import loop_of_rows
from .syntax import Stmt

_MAX_BLOCK = 48   # longest copy cut (statements): the alignment is quadratic in it
_MAX_EXTRA = 6    # most statements one copy may have that the body so far lacks, or lack
_MAX_COPIES = 8  # copies cut at most (longer runs of copies that differ rarely pay: 2% of tries)


def anchored_loops(items: list[Stmt], known, free: tuple, check: bool = True, sk: list | None = None,
                   geometric: bool = True, where: bytearray | None = None,
                   toks: list[int] | None = None) -> list[tuple]:
    """(start, end, loop) for runs of copies of `items` (a straight-line segment) cut at the
    repeats of an anchor statement's skeleton that align, each shorter than items[start:end];
    they do not overlap. `sk`: the items' skeletons as numbers, where the caller has them;
    `where`: the positions an anchor may be at (all where None); `toks`: the items' tokens,
    where the caller has them."""
    n = len(items)
    if n < 6:
        return []
    if sk is None:
        sk = [known.split(s)[0] for s in items]
    nxt = [0] * n  # the next position of each statement's skeleton (n: none)
    last: dict = {}
    for x in range(n - 1, -1, -1):
        nxt[x] = last.get(sk[x], n)
        last[sk[x]] = x
    if toks is None:
        toks = [known.tokens(s) for s in items]
    out = []
    x = 0
    prev = None
    while x < n:
        if not 2 <= nxt[x] - x <= _MAX_BLOCK or (where is not None and not where[x]):
            x += 1
            prev = None
            continue
        qs = _anchors(sk, nxt, x, n)
        gaps = tuple(b - a for a, b in zip(qs, qs[1:]))
        # the anchor one statement on, with the same gaps, cuts the same copies rotated
        # by one: tried once (the first of them)
        got = None if gaps == prev else _group_at(items, sk, qs, gaps, toks, known, free, check, geometric)
        prev = gaps
        if got is None:
            x += 1
            continue
        out.append(got[:3])
        x = got[1]
        prev = None
    return out


def _anchors(sk, nxt, q0: int, n: int) -> list[int]:
    """The repeats of sk[q0] from q0 on whose gaps keep near the first (the copies' starts)."""
    qs = [q0]
    g0 = None
    while len(qs) <= _MAX_COPIES:
        q = nxt[qs[-1]]
        g = q - qs[-1]
        if q >= n or g > _MAX_BLOCK:
            break
        if g0 is None:
            g0 = g
        elif abs(g - g0) > _MAX_EXTRA:
            break
        qs.append(q)
    return qs


def _group_at(items, sk, qs: list[int], gaps: tuple, toks: list[int], known, free, check: bool,
              geometric: bool):
    """The loop over the copies cut at the anchors `qs` (`gaps` between them), or None."""
    n = len(items)
    if len(qs) < 2 or gaps[0] < 2:
        return None
    # a last copy from the last anchor, as long as the longest before it, cut below where it
    # stops matching
    tail_end = min(n, qs[-1] + max(gaps))
    bounds = list(zip(qs, qs[1:])) + [(qs[-1], tail_end)]
    if any(len(gaps) >= 2 * k and gaps[:-k] == gaps[k:] for k in (2, 3, 4)):
        return None  # an anchor k times in each copy of a regular body: the ordinary search's
    if gaps[0] == gaps[1 % len(gaps)] and sk[qs[0]:qs[1]] == sk[bounds[1][0]:bounds[1][0] + gaps[0]]:
        # the first two copies alike statement for statement: the ordinary search's, up to
        # where a copy differs, from where an anchor of its own is tried
        return None
    a0, b0 = bounds[0]
    slots = [[x] for x in range(a0, b0)]
    ref = sk[a0:b0]
    ends = [b0]
    for t in range(1, len(bounds)):
        a, b = bounds[t]
        block = list(range(a, b))
        merged = _merge(slots, ref, sk, block, t, _MAX_EXTRA)
        if merged is None:
            break
        rows, r2, _ = merged
        if t == len(bounds) - 1:
            # the last copy: statements at its end that only it has are left outside
            while rows and rows[-1][-1] is not None and all(v is None for v in rows[-1][:-1]):
                rows.pop()
                r2 = r2[:-1]
                b -= 1
            if b <= a:
                break
        slots, ref = rows, r2
        ends.append(b)
    c = len(ends)
    if c < 2:
        return None
    for cc in range(c, max(1, c - 2), -1):  # the longest group that pays (one copy less at most)
        # (every row has a statement in some copy; less the last copies, some have none)
        none = [None] * cc
        rows = slots if cc == c else [x for r in slots if (x := r[:cc]) != none]
        # (loop_of_rows bounds the tokens first: most groups found here do not pay)
        built = loop_of_rows(items, rows, a0, ends[cc - 1], cc, known, free, check, geometric)
        if built is not None:
            return a0, ends[cc - 1], built, cc
    return None

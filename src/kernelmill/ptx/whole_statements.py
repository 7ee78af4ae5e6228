"""Loops over copies that differ by whole statements (issue 44): the two finders, `mov`s some
copies lack (presence.mov_loops) and statements aligned between copies of unequal length
(aligned.label_loops), run over a stream (`roll_stream`) or offered to the ordinary search's
plans (`offer`). Apart from both finders so that neither imports the other's caller:
aligned builds its loops with presence.loop_of_rows."""

from __future__ import annotations

from operator import sub

from .aligned import label_loops
from .anchored import anchored_loops
from .presence import apply, mov_loops
from .search import Segment, _Cand
from .syntax import Stmt, map_segments


def roll_stream(stmts, cfg, known, stats, barrier, cache: dict, free: tuple = (),
                check: bool = True) -> list[Stmt]:
    """Every straight-line segment of `stmts` (loop bodies and scopes too) through
    presence.mov_loops and aligned.label_loops, applied; `barrier(s)`: does s end a segment (reroll._is_barrier: the control opcodes and
    declarations)? `cache`: reroll's Segments by their statements' identities. `check`: each
    loop expanded and compared with what it replaces (else the caller checks the function)."""

    def roll(seg: list, free: tuple) -> list[Stmt]:
        items = tuple(seg)
        key = (tuple(map(id, items)), free, cfg.tables)
        raw = cache.get(key)
        if raw is None:  # the search's view of the segment, kept for reroll's plans
            raw = cache[key] = (items, Segment(list(items), cfg, [known.tokens(s) for s in items], free,
                                               [known.split(s) for s in items]))
        got = apply(seg, mov_loops(seg, cfg, known, free, raw[1], check), stats)
        sk = raw[1].sk if got is seg else None
        return apply(got, label_loops(got, known, free, check, sk, cfg.geometric), stats)

    return map_segments(stmts, roll, barrier, free)


def offer(seg: Segment, items: tuple, cfg, known, free: tuple, check: bool) -> None:
    """Put the loops over copies that differ by whole statements (presence.mov_loops, and
    aligned.label_loops) among the options of the ordinary search's Segment `seg` of `items`,
    each with its exact gain: its plans then choose between them and the ordinary loops, and
    the passes after fold them into outer loops like any other (search._Cand.pre)."""
    found = mov_loops(list(items), cfg, known, free, seg, check)
    found += label_loops(list(items), known, free, check, seg.sk, cfg.geometric)
    _put(seg, found, known)
    # copies cut at an anchor (anchored.py): looked for only where the plan so far leaves
    # statements unrolled (the search at every position cost a third of a reroll)
    choice = seg._plan_dp()
    where = bytearray(b"\x01") * len(items)
    pos = 0
    while pos < len(items):
        b = choice[pos]
        if b is None:
            pos += 1
        else:
            where[pos:pos + b.period * b.copies] = bytes(b.period * b.copies)
            pos += b.period * b.copies
    cum = seg.cum
    _put(seg, anchored_loops(list(items), known, free, check, seg.sk, cfg.geometric, where,
                             list(map(sub, cum[1:], cum[:-1]))), known)


def _put(seg: Segment, found: list, known) -> None:
    cum = seg.cum
    for start, end, loop in found:
        gain = cum[end] - cum[start] - known.tokens(loop)
        if gain > 0:
            c = _Cand(gain, start, end - start, 1, None, pre=loop)
            seg.options(start).append(c)  # (after the ordinary options of that position)
            seg.built[id(c)] = seg.made[id(c)] = loop

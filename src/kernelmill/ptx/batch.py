"""Reroll many PTX texts at once, over worker processes.

A worker gets a text and parses it, rerolls its functions and prints it: the text is parsed
once, in the worker (this process reads nothing: before, it parsed every text to hand its
functions out, and each worker parsed them again from their printed text, two parses of
~0.3 s for 1.45 MB, issue 44). Texts go largest first, so a big kernel does not start last
and run alone. A text larger than a worker's share of all of them (a file of 35 kernels)
is cut into ranges of about equal bytes, one per worker, each where a line starts a function
(`_cuts`), so one big file keeps two cores as busy as many small ones. A worker parses its
range alone, after as many newlines as the text had before it (its lines keep their
numbers): its items are those of the whole text's parse from there, since the parse of an
item reads no token past the item (session 21: each worker parsed the whole 2.4 MB unit
before, 0.28 s each). A range that does not parse alone (a cut that was no item's start)
sends the text back to be rerolled whole. Every text comes back whole, in the order given,
exactly as `reroll_text` would have made it: the reroll of a function does not depend on
the others, nor on which process runs it, so the output is the same for any `jobs`.

`jobs=1` runs in this process (no pool, nothing pickled). `count=True` also counts the
tokens of each text and of its Rolled-PTX, in the workers (`ptx stats`: counted in the
command's own process they were ~0.1 s of its 1.3 s for 1.45 MB, after the pool).
"""

from __future__ import annotations

import os
import re
from bisect import bisect_left
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from itertools import pairwise
from typing import Iterable

from .lexer import PtxSyntaxError, count_tokens
from .parser import gc_paused, parse_module
from .reroll import RerollConfig, RerollStats, reroll_function
from .syntax import Function, fmt_item, fmt_parts


@dataclass
class Rerolled:
    text: str           # Rolled-PTX of the whole input text
    stats: RerollStats  # of this text's functions
    tokens: tuple[int, int] | None = None  # (input, Rolled-PTX) tokens, with count=True


def default_jobs() -> int:
    """Worker processes by default: the CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _reroll_one(f: Function, cfg: RerollConfig) -> tuple[str, RerollStats]:
    """A function's reroll as `fmt_module` prints it, and its stats."""
    st = RerollStats()
    with gc_paused():  # as reroll_module does (parser.gc_paused)
        return fmt_item(reroll_function(f, cfg, st)), st


# a line that starts a function: the prefixes parser._starts_function reads, then .entry/.func
_FUNCTION_LINE = re.compile(r"^[ \t]*(?:\.(?:visible|extern|weak)\s+)*\.(?:entry|func)\b", re.MULTILINE)


def _cuts(text: str, n: int) -> list[int]:
    """Where the text's n ranges start, and its end: 0, then for each later range the start of
    the line nearest to its share of the bytes that starts a function. In a text with a block
    comment (a line in one may look like a function's start), no cut: one range is the whole
    text, the others empty."""
    starts = [] if "/*" in text else [m.start() for m in _FUNCTION_LINE.finditer(text)]
    cuts = [0]
    for k in range(1, n):
        want = k * len(text) // n
        i = bisect_left(starts, want)
        near = min(starts[max(0, i - 1):i + 1], key=lambda x: abs(x - want), default=0)
        cuts.append(max(cuts[-1], near))
    return cuts + [len(text)]


def _reroll_part(task: tuple[str, str, RerollConfig, int, bool, bool]) -> tuple[list | None, RerollStats, tuple | None]:
    """In a worker: a text, or a range of one (`whole` False) after `lines` newlines, parsed and
    rerolled: each of its items' text (None where a range does not parse alone: the text
    goes whole then, and a whole text's error is raised)."""
    # the cyclic collector paused for the whole task, and turned back on only once the
    # syntax trees are freed (when _reroll_part_paused returns): turned on while they live
    # (after the parse, after each function), it walks all of them (~5% of a task, issue 44)
    with gc_paused():
        return _reroll_part_paused(*task)


def _reroll_part_paused(text: str, source: str, cfg: RerollConfig, lines: int, whole: bool,
                        count: bool = False) -> tuple[list | None, RerollStats, tuple | None]:
    try:
        m = parse_module("\n" * lines + text, source)
    except PtxSyntaxError:
        if whole:
            raise
        return None, RerollStats(), None
    st = RerollStats()
    out: list = []
    for x in m.items:
        if isinstance(x, Function) and x.body is not None:
            part, fst = _reroll_one(x, cfg)
            st.add(fst)
            out.append(part)
        else:
            out.append(fmt_item(x))
    # tokens are additive over items (fmt_parts joins them with newlines; no token spans one),
    # and over ranges (each starts a line)
    return out, st, ((count_tokens(text), sum(map(count_tokens, out))) if count else None)


def _whole(text: str, source: str, cfg: RerollConfig, count: bool) -> Rerolled:
    return _joined([_reroll_part((text, source, cfg, 0, True, count))])


def reroll_texts(texts: Iterable[tuple[str, str]], cfg: RerollConfig | None = None,
                 jobs: int | None = None, count: bool = False) -> list[Rerolled]:
    """(PTX text, source name) pairs -> their Rolled-PTX, in the same order.

    Raises PtxSyntaxError (naming the source) when a text does not parse, and gives no
    output then (with `jobs` > 1, rerolls of other texts may have run meanwhile)."""
    cfg = cfg or RerollConfig()
    jobs = default_jobs() if jobs is None else jobs
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, not {jobs}")
    texts = list(texts)
    total = sum(len(t) for t, _ in texts)
    # a text over a worker's share goes in parts, one per worker (at most one per
    # function: `.entry`/`.func` counted in the text, an estimate; a part may be empty)
    parts = [1 if len(t) * jobs <= total else max(1, min(jobs, t.count(".entry") + t.count(".func")))
             for t, _ in texts]
    if jobs == 1 or sum(parts) <= 1:  # one task (`ptx reroll` of a one-kernel file): no pool to start
        return [_whole(text, source, cfg, count) for text, source in texts]
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i][0]))
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        running: dict[int, list] = {}
        for i in order:
            text, source = texts[i]
            cuts = _cuts(text, parts[i]) if parts[i] > 1 else [0, len(text)]
            running[i] = [pool.submit(_reroll_part, (text[a:b], source, cfg, text.count("\n", 0, a),
                                                     parts[i] == 1, count))
                          for a, b in pairwise(cuts)]
        try:
            done = {i: [f.result() for f in futs] for i, futs in running.items()}
        except BaseException:
            for futs in running.values():
                for f in futs:
                    f.cancel()
            raise
    # a range that did not parse alone: the text rerolled whole, here (its error raised, if any)
    return [_joined(done[i]) if all(r[0] is not None for r in done[i]) else _whole(*texts[i], cfg, count)
            for i in range(len(texts))]


def _joined(results: list[tuple[list, RerollStats, tuple | None]]) -> Rerolled:
    """One text's Rolled-PTX from the results of its ranges (_reroll_part), in order."""
    st = RerollStats()
    for _, fst, _ in results:
        st.add(fst)
    tokens = (None if results[0][2] is None else
              (sum(r[2][0] for r in results), sum(r[2][1] for r in results)))
    return Rerolled(fmt_parts([x for r in results for x in r[0]]), st, tokens)

"""Reroll many PTX texts at once, over worker processes.

A worker gets a text and parses it, rerolls its functions and prints it: the text is parsed
once, in the worker (this process reads nothing: before, it parsed every text to hand its
functions out, and each worker parsed them again from their printed text, two parses of
~0.3 s for 1.45 MB, issue 44). Texts go largest first, so a big kernel does not start last
and run alone. A text larger than a worker's share of all of them (a file of 35 kernels)
is handed to several workers, each of which parses it and rerolls its own part of the
functions (the largest first, each to the part with the fewest statements so far; every
worker computes the same parts), so one big file keeps two cores as busy as many small
ones. Every text comes back whole, in the order given, exactly as `reroll_text` would have
made it: the reroll of a function does not depend on the others, nor on which process runs
it, so the output is the same for any `jobs`.

`jobs=1` runs in this process (no pool, nothing pickled). `count=True` also counts the
tokens of each text and of its Rolled-PTX, in the workers (`ptx stats`: counted in the
command's own process they were ~0.1 s of its 1.3 s for 1.45 MB, after the pool).
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Iterable

from .lexer import count_tokens
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


def _functions(m) -> list[int]:
    return [k for k, x in enumerate(m.items) if isinstance(x, Function) and x.body is not None]


def _parts(m, n: int) -> list[set[int]]:
    """The module's function items in n parts of about equal statements: largest first,
    each to the part with the fewest so far (the same parts in every process)."""
    parts, size = [set() for _ in range(n)], [0] * n
    for k in sorted(_functions(m), key=lambda k: -len(m.items[k].body)):
        j = size.index(min(size))
        parts[j].add(k)
        size[j] += len(m.items[k].body)
    return parts


def _reroll_part(task: tuple[str, str, RerollConfig, int, int, bool]) -> tuple[str | list, RerollStats, tuple | None]:
    """In a worker: the text parsed, part `j` of `n` of its functions rerolled. One part:
    the whole Rolled-PTX text; else each item's text (None: another part's function), the
    items that are no function printed by part 0."""
    # the cyclic collector paused for the whole task, and turned back on only once the
    # syntax trees are freed (when _reroll_part_paused returns): turned on while they live
    # (after the parse, after each function), it walks all of them (~5% of a task, issue 44)
    with gc_paused():
        return _reroll_part_paused(*task)


def _reroll_part_paused(text: str, source: str, cfg: RerollConfig, j: int, n: int,
                        count: bool = False) -> tuple[str | list, RerollStats, tuple | None]:
    m = parse_module(text, source)
    mine = _parts(m, n)[j] if n > 1 else set(_functions(m))
    st = RerollStats()
    out: list = []
    for k, x in enumerate(m.items):
        if k in mine:
            part, fst = _reroll_one(x, cfg)
            st.add(fst)
            out.append(part)
        else:
            out.append(fmt_item(x) if j == 0 and not (isinstance(x, Function) and x.body is not None) else None)
    if n == 1:
        out = fmt_parts(out)
        return out, st, ((count_tokens(text), count_tokens(out)) if count else None)
    # tokens are additive over items (fmt_parts joins them with newlines; no token spans one):
    # part 0 counts the input, each part the items it printed
    tokens = ((count_tokens(text) if j == 0 else 0, sum(count_tokens(x) for x in out if x is not None))
              if count else None)
    return out, st, tokens


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
        return [Rerolled(*_reroll_part((text, source, cfg, 0, 1, count))) for text, source in texts]
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i][0]))
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        running: dict[int, list] = {}
        for i in order:
            text, source = texts[i]
            n = parts[i]
            running[i] = [pool.submit(_reroll_part, (text, source, cfg, j, n, count)) for j in range(n)]
        try:
            done = {i: [f.result() for f in futs] for i, futs in running.items()}
        except BaseException:
            for futs in running.values():
                for f in futs:
                    f.cancel()
            raise
    return [_joined(done[i]) for i in range(len(texts))]


def _joined(results: list[tuple[str | list, RerollStats, tuple | None]]) -> Rerolled:
    """One text's Rolled-PTX from the results of its parts (_reroll_part)."""
    st = RerollStats()
    for _, fst, _ in results:
        st.add(fst)
    tokens = (None if results[0][2] is None else
              (sum(r[2][0] for r in results), sum(r[2][1] for r in results)))
    if len(results) == 1:
        return Rerolled(results[0][0], st, tokens)
    items = zip(*(r[0] for r in results))  # per item: its text from the part that printed it
    return Rerolled(fmt_parts([next(x for x in texts if x is not None) for texts in items]), st, tokens)

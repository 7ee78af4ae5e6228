"""Reroll many PTX texts at once, one kernel a task, over worker processes.

The unit of work is one function: a file of 35 kernels keeps two cores as busy as 35
files of one. Each text is parsed here (the parser is ~10x faster than the reroll) while
the workers already reroll the functions of the texts parsed before it; texts and their
functions go largest first (so a big kernel does not start last and run alone), and
every text comes back whole, in the order given, exactly as `reroll_text`
would have made it: the reroll of a function does not depend on the others, nor on
which process runs it, so the output is the same for any `jobs`.

A function travels to its worker as its printed text and comes back as the printed text
of its reroll: printing is canonical (`parse(print(f)) == f`), and a syntax tree pickled
and unpickled cost more than printing and parsing it (0.23 s + 0.40 s against 0.05 s +
~0.3 s for 1.45 MB, issue 44), all of the pickling in this one process.

`jobs=1` runs in this process (no pool, nothing pickled).
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Iterable

from .parser import gc_paused, parse_module
from .reroll import RerollConfig, RerollStats, reroll_function
from .syntax import Function, fmt_function, fmt_item, fmt_parts


@dataclass
class Rerolled:
    text: str           # Rolled-PTX of the whole input text
    stats: RerollStats  # of this text's functions


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


def _reroll_printed(task: tuple[str, str, RerollConfig]) -> tuple[str, RerollStats]:
    """In a worker: the function from its printed text, rerolled, printed."""
    text, source, cfg = task
    (f,) = parse_module(text, source).items
    return _reroll_one(f, cfg)


def reroll_texts(texts: Iterable[tuple[str, str]], cfg: RerollConfig | None = None,
                 jobs: int | None = None) -> list[Rerolled]:
    """(PTX text, source name) pairs -> their Rolled-PTX, in the same order.

    Raises PtxSyntaxError (naming the source) when a text does not parse, and gives no
    output then (with `jobs` > 1, rerolls of texts parsed before it may have started)."""
    cfg = cfg or RerollConfig()
    jobs = default_jobs() if jobs is None else jobs
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, not {jobs}")
    texts = list(texts)
    done: dict[tuple[int, int], tuple[str, RerollStats]] = {}
    modules: list = [None] * len(texts)

    def functions(i: int) -> list[tuple[int, int, Function]]:
        modules[i] = m = parse_module(*texts[i])
        return [(i, k, x) for k, x in enumerate(m.items) if isinstance(x, Function) and x.body is not None]

    if jobs == 1:
        for i in range(len(texts)):
            for _, k, f in functions(i):
                done[i, k] = _reroll_one(f, cfg)
    else:
        # the workers start on the first text's functions while this process parses the
        # next (the parse is ~10% of the work, issue 44); texts largest first and each
        # text's functions largest first (statements are a fair measure of reroll time),
        # so a big kernel does not start last and run alone
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            running = {}
            try:
                for i in sorted(range(len(texts)), key=lambda i: -len(texts[i][0])):
                    for _, k, f in sorted(functions(i), key=lambda t: -len(t[2].body)):
                        running[i, k] = pool.submit(_reroll_printed, (fmt_function(f), f"{texts[i][1]}:{f.name}", cfg))
            except BaseException:
                for fut in running.values():
                    fut.cancel()
                raise
            for key, fut in running.items():
                done[key] = fut.result()
    out = []
    for i, m in enumerate(modules):
        st = RerollStats()
        parts = []
        for k, x in enumerate(m.items):
            if (i, k) in done:
                part, fst = done[i, k]
                st.add(fst)
                parts.append(part)
            else:
                parts.append(fmt_item(x))
        out.append(Rerolled(fmt_parts(parts), st))
    return out

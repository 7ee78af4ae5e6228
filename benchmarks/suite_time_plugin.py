"""A pytest plugin that writes each test's wall and CPU time (benchmarks/suite_time.py
loads it with ``-p suite_time_plugin``): one JSON line per test to
``$SUITE_TIME_OUT-<xdist worker>.jsonl``.

CPU is this process's own (user + system) plus that of its children once reaped
(RUSAGE_CHILDREN: compilers, verify's workers). A module fixture's cost goes to the
first test that uses it; a child is charged to the test during which it was reaped (a
background build one test starts and a later one reaps shows in the later one), and a
child reparented away from the run is not seen: per file, and over the run, the sums
hold; a single test's figure may carry a neighbour's. pytest's `--durations` gives wall time only; the suite's
target (issue 45) is a 2-core machine, where CPU is what cannot be overlapped."""

from __future__ import annotations

import json
import os
import resource
import time

import pytest


def _cpu() -> tuple[float, float]:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime


def _write(row: dict) -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(f"{os.environ['SUITE_TIME_OUT']}-{worker}.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps(row) + "\n")


def pytest_sessionstart(session):
    own, kids = _cpu()  # the interpreter's start and the collection's imports
    _write({"id": "<start>", "cpu_self": own, "cpu_children": kids, "at": time.time()})


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    own, kids = _cpu()
    t0 = time.monotonic()
    yield
    own2, kids2 = _cpu()
    _write({"id": item.nodeid, "wall": time.monotonic() - t0, "cpu_self": own2 - own,
            "cpu_children": kids2 - kids, "at": time.time()})

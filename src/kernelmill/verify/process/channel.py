"""The pipes between a guarded run's supervisor and its candidate's process, both ends.

    supervisor                                   candidate's process
    Launched.go()/send()  -- command pipe -->    b"1", then one JSON command a line:
                                                 warm, round, kernelbench, end (candidate._serve_timing)
    Reports.next/expect   <-- report pipe --     Reporter.send: one JSON line each
                                                 (WARM_LINE first on CUDA; "ready"; answers; "facts" last)

`RemoteSide` is the candidate's side of a timing comparison as the supervisor drives it.
A report out of protocol is kept as a forged-output finding (item 20). This module imports
no torch at import time: `launch` (imported by the worker before torch) needs `WARM_LINE`.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # timing imports torch, which this module must not at import time
    from ..measure.timing import Round

# what a spawned candidate's process writes on its report pipe once warm (candidate.main)
WARM_LINE = b'{"warm": true}'


class Reporter:
    """JSON lines to the supervisor, one ``write`` each."""

    def __init__(self, fd: int):
        self.fd = fd

    def send(self, message: dict) -> None:
        data = (json.dumps(message, default=float) + "\n").encode()
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view):]


class ChannelError(RuntimeError):
    """The candidate's process ended, or said something out of turn, mid-protocol."""


class Reports:
    """The candidate's report pipe, read one JSON line at a time. A report out
    of protocol (a second final report, text that is no report) is kept as a
    forged-output finding (item 20)."""

    def __init__(self, fd: int):
        self.file = os.fdopen(os.dup(fd), "rb")
        self.final: dict | None = None
        self.forged: list[str] = []

    def next(self) -> dict | None:
        while True:  # a loop, not recursion: a candidate may write any number of junk lines
            line = self.file.readline()
            if not line:
                return None
            try:
                msg = json.loads(line)
                if isinstance(msg, dict):
                    break
            except ValueError:
                pass
            self.forged.append(f"a line that is no report: {line[:80]!r}")
        if "facts" in msg:
            if self.final is not None:
                self.forged.append("a second final report")
            else:
                self.final = msg["facts"]
        return msg

    def expect(self, key: str, whole: bool = False):
        while True:
            msg = self.next()
            if msg is None:
                raise ChannelError("the candidate's process ended during timing")
            if key in msg:
                return msg if whole else msg[key]
            if "facts" in msg:
                raise ChannelError("the candidate's process stopped during timing")

    def drain(self) -> None:
        """Everything left once the process (and anything it started) is gone."""
        while self.next() is not None:
            pass
        self.file.close()


def _round(msg, n: int) -> Round:
    """A round as the candidate's process reported it, held to its `n` calls."""
    from ..measure.timing import Round

    if not isinstance(msg, dict) or "times_ms" not in msg:
        raise ChannelError("a timing round's report is not a round")
    try:
        r = Round.from_msg(msg)
    except (KeyError, TypeError, ValueError) as exc:
        raise ChannelError(f"a timing round's report does not read: {str(exc)[:120]}") from None
    if len(r.times_ms) != n or (r.events_ms is not None and len(r.events_ms) != n):
        raise ChannelError(f"a timing round of {n} calls reported {len(r.times_ms)} times")
    return r


# the keys of timing.process_state, the only ones a candidate's report may set
_STATE_KEYS = frozenset({"grad", "profile", "trace", "threads", "function_modes", "dispatch_modes", "module_hooks",
                         "autograd_profiler", "redone_preempted", "kept_preempted", "trial_median_ms", "trial_max_ms"})


class RemoteSide:
    """The candidate's side of the timing comparison, in its own process: each
    command is one JSON line down the command pipe, each answer one line back."""

    def __init__(self, launched, reports: "Reports", rng=None):  # launched: launch.Launched
        self.launched, self.reports, self.rng = launched, reports, rng
        self._deferred: list = []  # the deferred rounds returned so far, filled in by finish_rounds

    def warm(self, warmup_ms: float) -> float:
        self.launched.send({"cmd": "warm", "ms": warmup_ms})
        return float(self.reports.expect("est_ms"))

    def round(self, n: int, check=None, defer: bool = False) -> Round:
        # the calls' input scales, drawn here from the run's secret (never in the candidate's process before its round)
        scales = [self.rng.uniform(0.5, 1.5) for _ in range(n)] if self.rng is not None else None
        self.launched.send({"cmd": "round", "n": n, "check": list(check) if check else None, "scales": scales,
                            "defer": bool(defer)})
        r = _round(self.reports.expect("times_ms", whole=True), n)
        if defer:
            self._deferred.append(r)
        return r

    def close_rounds(self) -> None:
        """The candidate's process has its deferred rounds' records on the host (answered
        before the supervisor lets the timing lock go); it reads them at once, unlocked."""
        self.launched.send({"cmd": "close"})
        self.reports.expect("closed")

    def finish_rounds(self) -> list[Round]:
        """The deferred rounds with the kernel times the candidate's process read, in place."""
        pending, self._deferred = self._deferred, []
        msg = self.reports.expect("rounds", whole=True)
        got = msg.get("rounds")
        if not isinstance(got, list) or len(got) != len(pending):
            raise ChannelError(f"{len(pending)} deferred timing rounds, {len(got) if isinstance(got, list) else 'no'} "
                               "read back")
        for r, m in zip(pending, got):
            filled = _round(m, len(r.times_ms))
            r.times_ms, r.method, r.trace_note, r.provenance = (filled.times_ms, filled.method, filled.trace_note,
                                                                 filled.provenance)
        return pending

    def kernelbench_round(self, trials: int) -> list[float]:
        self.launched.send({"cmd": "kernelbench", "trials": trials})
        msg = self.reports.expect("kb_ms", whole=True)
        # what the candidate's process says of itself: kept to the keys and sizes the harness writes
        self.kb_host_ms = [float(t) for t in (msg.get("kb_host_ms") or [])[:trials]]
        state = msg.get("kb_state") if isinstance(msg.get("kb_state"), dict) else {}
        self.kb_state = {k: (v[:8] if isinstance(v, list) else v) for k, v in state.items()
                         if k in _STATE_KEYS and isinstance(v, (bool, int, float, list))
                         and all(isinstance(x, str) and len(x) < 80 for x in (v if isinstance(v, list) else []))} or None
        return [float(t) for t in msg["kb_ms"]]

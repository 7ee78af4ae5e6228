"""The one timing utility. Nothing else in kernelmill times kernels.

What it protects against:
* asynchronous launches: on CUDA each call is bracketed by events and followed
  by a *device-wide* synchronize, so work the callee pushed to other streams
  is waited for before the next call starts (and shows up in the wall clock);
* warm caches: before every timed call an L2-sized buffer is overwritten, so a
  kernel does not look fast because its inputs are still in cache;
* cold starts: warm-up calls run first (module load, autotuning, JIT);
* order effects: the callables are interleaved call by call, so clock boost and
  thermal drift affect reference and candidate alike;
* too few samples: a time budget picks the repetition count from a measured
  estimate, within [min_reps, max_reps].

* stale memory: each callable's last output stays alive until its next call,
  so one callable cannot receive the other's freed output buffer;
* results cached across calls (with the guards): `prepare` refills the inputs
  in place before each call, outside the timed region, and `keep` returns the
  outputs of chosen repetitions so they can be checked;
* work the events do not see: each call's host wall time (through the
  device-wide synchronize) is recorded beside the event time.

What it does not do: judge anything (the guards compare event and wall time,
and check kept outputs); on CPU it measures wall time with perf_counter.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import asdict, dataclass
from typing import Callable

import torch


@dataclass
class TimingConfig:
    warmup_ms: float = 25.0
    budget_ms: float = 200.0  # time spent in timed calls, per callable
    min_reps: int = 10
    max_reps: int = 1000
    flush_l2: bool = True


@dataclass
class Timing:
    median_ms: float
    p20_ms: float
    p80_ms: float
    mean_ms: float
    min_ms: float
    reps: int
    wall_ms: float  # host wall time around all timed calls of this callable
    wall_median_ms: float | None = None  # median host wall time of one call (to the device-wide sync)

    def to_dict(self) -> dict:
        return asdict(self)


def _quantile(sorted_vals: list[float], q: float) -> float:
    if len(sorted_vals) == 1:
        return sorted_vals[0]
    pos = q * (len(sorted_vals) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_vals) - 1)
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (pos - lo)


def _snapshot(out: object) -> object:
    if isinstance(out, torch.Tensor):
        return out.detach().clone()
    if isinstance(out, (list, tuple)):
        return type(out)(_snapshot(o) for o in out)
    return out


class _Clock:
    """Times one call on one device; the CUDA flavour uses events."""

    def __init__(self, device: torch.device, flush_l2: bool):
        self.cuda = device.type == "cuda"
        self.flush = None
        if self.cuda and flush_l2:
            l2 = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 64 << 20)
            # twice the L2, in int32 words, so every line of it is evicted
            self.flush = torch.empty(max(2 * l2, 1 << 20) // 4, dtype=torch.int32, device=device)

    def sync(self) -> None:
        if self.cuda:
            torch.cuda.synchronize()

    def time_call(self, fn: Callable[[], object]) -> tuple[float, object, float]:
        """(event or perf_counter ms, the call's return value, host wall ms)."""
        if self.flush is not None:
            self.flush.zero_()
        if self.cuda:
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            start.record()
            out = fn()
            end.record()
            torch.cuda.synchronize()  # device-wide: other streams count too
            wall = (time.perf_counter() - t0) * 1e3
            return start.elapsed_time(end), out, wall
        t0 = time.perf_counter()
        out = fn()
        ms = (time.perf_counter() - t0) * 1e3
        return ms, out, ms


def time_interleaved(
    fns: dict[str, Callable[[], object]],
    device: torch.device | str,
    config: TimingConfig | None = None,
    prepare: dict[str, Callable[[int], None]] | None = None,
    keep: dict[str, dict[int, object]] | None = None,
) -> dict[str, Timing]:
    """Time each callable, interleaving them call by call; returns per-name stats.

    `prepare[name](i)` runs before call i of `name` (warm-up calls get i < 0),
    untimed. `keep[name]` maps repetition indices to None; the outputs of those
    timed repetitions are stored there."""
    config = config or TimingConfig()
    device = torch.device(device)
    clock = _Clock(device, config.flush_l2)
    names = list(fns)
    prepare = prepare or {}
    keep = keep or {}
    last: dict[str, object] = {}

    def call(name: str, i: int) -> tuple[float, float]:
        if name in prepare:
            prepare[name](i)
        ms, out, wall = clock.time_call(fns[name])
        last[name] = out  # freed only when this callable runs again
        if i in keep.get(name, {}):
            keep[name][i] = _snapshot(out)  # later calls may reuse or overwrite the buffer
        return ms, wall

    # warm-up, which also gives the per-call estimate that sizes the run
    est: dict[str, float] = {}
    for name in names:
        clock.sync()
        t0 = time.perf_counter()
        n = 0
        while True:
            call(name, -1 - n)
            n += 1
            if (time.perf_counter() - t0) * 1e3 >= config.warmup_ms and n >= 2:
                break
        est[name] = (time.perf_counter() - t0) * 1e3 / n
    slowest = max(est.values())
    reps = int(min(config.max_reps, max(config.min_reps, config.budget_ms / max(slowest, 1e-6))))

    samples: dict[str, list[float]] = {n: [] for n in names}
    walls: dict[str, list[float]] = {n: [] for n in names}
    wall: dict[str, float] = {n: 0.0 for n in names}
    for rep in range(reps):
        for name in names:
            t0 = time.perf_counter()
            ms, call_wall = call(name, rep)
            samples[name].append(ms)
            walls[name].append(call_wall)
            wall[name] += (time.perf_counter() - t0) * 1e3

    out = {}
    for name in names:
        vals = sorted(samples[name])
        out[name] = Timing(
            median_ms=statistics.median(vals), p20_ms=_quantile(vals, 0.2),
            p80_ms=_quantile(vals, 0.8), mean_ms=statistics.fmean(vals),
            min_ms=vals[0], reps=len(vals), wall_ms=wall[name],
            wall_median_ms=statistics.median(walls[name]),
        )
    return out

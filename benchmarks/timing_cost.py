"""Where a timed comparison's wall goes, per round, on one GPU (verify/measure/timing.py).

Issue 40's cold run of cuda-l1 spent ~107 s in the timing phase for ~25.6 s of timed calls
(session 25). A verdict's `measurement.timing_stages` says how much of a comparison went to
warm-up, KernelBench's trials and the rounds; this script splits a round itself, on
workloads of known size, with the harness's own `Bench` and input pool:

* `round_ms`: the whole `Bench.round` call; `loop_ms`: the calls with their refills,
  flushes and launch covers, to the last synchronize; `trace_start_ms` / `trace_stop_ms`:
  the device-activity session's start and its stop with the records read back;
  `attribute_ms`: what is left (splitting the records into calls, provenance);
  `timed_ms`: the calls' own GPU time summed (what the budget counts).
* variants switch one thing off at a time: `default` (as a verdict times before 0.5.21: a
  profiler session per round), `events` (no activity records, CUDA events only),
  `events_noflush` (and no L2 flush, no launch cover), `noprep` (default without the per-call
  input refill), `deferred` (as a verdict times since 0.5.21: one session across the rounds,
  closed under the lock and read after it: `round_ms` is then what a round holds the GPU,
  `read_ms` what reading its records costs afterwards, per round).
  Session 26's `toggled` variant (the CUDA collection off around the refill and the flush
  between calls) is gone: kineto's toggle synchronizes the device and flushes CUPTI's buffers,
  2.3-2.5 ms a call on an H200, five times the default's round (session 27's README).
* `kb_trials_ms`: one side's KernelBench-convention trials (`kernelbench_round`).

    python benchmarks/timing_cost.py --rounds 5 --json cost.json      # needs a GPU

It imports the harness's timing code: it says where that code spends its time, it is not
an independent measure of any speedup.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

import torch  # noqa: E402

from kernelmill.verify.measure import inputs as inp  # noqa: E402
from kernelmill.verify.measure import kernel_time, timing  # noqa: E402
from kernelmill.verify.measure.settings import TimingConfig  # noqa: E402


def workloads(device: str) -> dict:
    """name -> (fn of the inputs, the inputs)."""
    g = torch.Generator(device=device).manual_seed(0)

    def r(*shape):
        return torch.randn(*shape, device=device, generator=g)

    return {
        "relu_4k": (torch.relu, [r(4096)]),
        "relu_16M": (torch.relu, [r(1 << 24)]),
        "matmul_4096": (torch.matmul, [r(4096, 4096), r(4096, 4096)]),
        "sum_256M": (lambda x: x.sum(dim=0), [r(1 << 14, 1 << 14)]),
        "conv_64ch": (lambda x, w: torch.nn.functional.conv2d(x, w, padding=1), [r(32, 64, 112, 112), r(64, 64, 3, 3)]),
    }


class _Clocked:
    """DeviceTrace with its start and stop timed (patched in for the run)."""

    start_s: ClassVar[list[float]] = []
    stop_s: ClassVar[list[float]] = []
    records: ClassVar[list[int]] = []

    def __init__(self):
        self.inner = kernel_time.DeviceTrace()

    @property
    def prof(self):
        return self.inner.prof

    @property
    def error(self):
        return self.inner.error

    def start(self):
        t = time.perf_counter()
        self.inner.start()
        _Clocked.start_s.append(time.perf_counter() - t)

    def stop(self):
        t = time.perf_counter()
        out = self.inner.stop()
        _Clocked.stop_s.append(time.perf_counter() - t)
        _Clocked.records.append(len(out or []))
        return out


def run_variant(fn, args_set, device: str, cfg: TimingConfig, rounds: int, prep: bool, defer: bool = False) -> dict:
    pool = inp.InputPool(args_set)
    import random

    rng = random.Random(0)

    def prepare(i: int) -> None:
        pool.prepare(args_set, rng.uniform(0.5, 1.5))

    bench = timing.Bench(lambda: fn(*pool.current), device, cfg, prepare=prepare if prep else None)
    t = time.perf_counter()
    est = bench.warm(cfg.warmup_ms)
    warm_s = time.perf_counter() - t
    n = timing.calls_for(est, cfg)
    _Clocked.start_s, _Clocked.stop_s, _Clocked.records = [], [], []
    totals, loops, timed = [], [], []
    method, note = "", ""
    done = []
    for k in range(rounds):
        t = time.perf_counter()
        done.append(bench.round(n, defer=defer))
        if defer and k == rounds - 1:
            bench.close_rounds()  # the last step under the lock
        totals.append((time.perf_counter() - t) * 1e3)
        loops.append(done[-1].wall_ms)
    read_ms = None
    if defer:
        t = time.perf_counter()
        bench.finish_rounds()
        read_ms = (time.perf_counter() - t) * 1e3 / rounds
    for rd in done:
        timed.append(sum(rd.times_ms))
        method = rd.method
        note = rd.trace_note or note
    out = {"calls_per_round": n, "est_ms": round(est, 4), "warm_s": round(warm_s, 4), "method": method, "note": note,
           "round_ms": round(statistics.median(totals), 2), "loop_ms": round(statistics.median(loops), 2),
           "timed_ms": round(statistics.median(timed), 3),
           "per_call_us": round(statistics.median(loops) / n * 1e3, 1),
           "timed_per_call_us": round(statistics.median(timed) / n * 1e3, 1)}
    if read_ms is not None:
        out["read_ms"] = round(read_ms, 2)
        out["records"] = int(_Clocked.records[-1] / rounds) if _Clocked.records else 0
    elif _Clocked.start_s:
        a = statistics.median(_Clocked.start_s) * 1e3
        b = statistics.median(_Clocked.stop_s) * 1e3
        out.update(trace_start_ms=round(a, 2), trace_stop_ms=round(b, 2),
                   attribute_ms=round(out["round_ms"] - out["loop_ms"] - a - b, 2),
                   records=int(statistics.median(_Clocked.records)))
    if cfg.kb_trials and prep:
        t = time.perf_counter()
        bench.kernelbench_round(timing.kb_trial_count(est, cfg))
        out["kb_trials_ms"] = round((time.perf_counter() - t) * 1e3, 1)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--only", default="", help="comma-separated workload names")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("timing_cost.py needs a GPU (it times the device's rounds)", file=sys.stderr)
        return 2
    device = "cuda"
    timing.DeviceTrace = _Clocked  # Bench.round builds its trace through this name
    base = TimingConfig()
    variants = {"default": (base, True), "events": (replace(base, kernel_time=False), True),
                "events_noflush": (replace(base, kernel_time=False, flush_l2=False, launch_cover_us=0.0), True),
                "noprep": (base, False), "deferred": (base, True, True)}
    results = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "rounds": args.rounds,
               "config": {"round_ms": base.round_ms, "warmup_ms": base.warmup_ms, "launch_cover_us": base.launch_cover_us},
               "workloads": {}}
    only = {s for s in args.only.split(",") if s}
    with torch.no_grad():
        for name, (fn, xs) in workloads(device).items():
            if only and name not in only:
                continue
            row = {}
            for vname, (cfg, prep, *defer) in variants.items():
                row[vname] = run_variant(fn, xs, device, cfg, args.rounds, prep, *defer)
                d = row[vname]
                print(f"{name:12s} {vname:15s} {d['method']:11s} calls {d['calls_per_round']:4d}  round {d['round_ms']:8.2f} ms  "
                      f"loop {d['loop_ms']:8.2f}  timed {d['timed_ms']:8.3f}  per call {d['per_call_us']:7.1f} us "
                      f"(timed {d['timed_per_call_us']:6.1f})"
                      + (f"  trace start {d['trace_start_ms']:.2f} stop {d['trace_stop_ms']:.2f} "
                         f"attribute {d['attribute_ms']:.2f} ({d['records']} records)" if "trace_stop_ms" in d else "")
                      + (f"  read afterwards {d['read_ms']:.2f} ms a round ({d['records']} records)" if "read_ms" in d else "")
                      + (f"  kb trials {d['kb_trials_ms']:.0f} ms" if "kb_trials_ms" in d else "")
                      + (f"  ({d['note']})" if d["note"] else ""), flush=True)
            results["workloads"][name] = row
            del xs
            torch.cuda.empty_cache()
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Device diagnosis for issue 39's one unexplained row (scale_add__add_alpha: kernelmill 5.1 us,
the independent side 4.3 us for the same `torch.add(a, b, alpha=2)` on 1M floats; the reference
7.4 against 7.0 us). Does the per-call sequence change the kernel's own duration?

Both sequences below time the same call in one process, by its kernel's device record
(torch.profiler), imports nothing of kernelmill:

* `harness`: kernelmill's order (verify/measure/timing.py): refill the inputs with fresh values,
  zero a 2x-L2 buffer, spin ~100 us (torch.cuda._sleep), the call, a 1-cycle spin marker; calls
  queued back to back, one synchronise per round, one profiler session around the round;
* `plain`: the independent side's (benchmarks/timing_fidelity.py `_profiled_kernel_ms`): zero the
  buffer, synchronise, a profiler session around the call alone, synchronise.

Plus the two crossings that tell the steps apart: `harness_no_refill` and `plain_refill`.
Run on the device: `python docs/results/session_2026-11-30/per_call_sequence.py` (about 30 s).
A diagnosis script: it leaves once its finding is recorded in the session's README.
"""

from __future__ import annotations

import json

import torch
from torch.profiler import ProfilerActivity, profile

N = 1 << 20
CALLS = 40


def kernel_us(prof, skip=("sleep", "spin", "zero", "fill", "copy", "normal", "uniform", "distribution")) -> list[float]:
    """Durations of the device kernels that are not the harness's own (by name)."""
    out = []
    for e in prof.events():
        if e.device_type != torch.autograd.DeviceType.CUDA:
            continue
        name = e.name.lower()
        if any(s in name for s in skip):
            continue
        out.append(e.time_range.end - e.time_range.start)
    return out


def run(seq: str, fn, inputs, fresh, flush, spin_cycles: int) -> float:
    refill = seq in ("harness", "plain_refill")
    if seq.startswith("harness"):
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(CALLS):
                if refill:
                    for x, f in zip(inputs, fresh):
                        x.copy_(f)
                flush.zero_()
                torch.cuda._sleep(spin_cycles)
                fn(*inputs)
                torch.cuda._sleep(1)
            torch.cuda.synchronize()
        per = kernel_us(prof)
    else:
        per = []
        for _ in range(CALLS):
            if refill:
                for x, f in zip(inputs, fresh):
                    x.copy_(f)
            flush.zero_()
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                fn(*inputs)
                torch.cuda.synchronize()
            per += kernel_us(prof)
    return sum(per) / CALLS  # the call's own kernels, per call (mean; harness kernels left out by name)


def main() -> None:
    dev = torch.device("cuda")
    a, b = torch.randn(N, device=dev), torch.randn(N, device=dev)
    fresh = [torch.randn(N, device=dev), torch.randn(N, device=dev)]
    flush = torch.empty(2 * torch.cuda.get_device_properties(0).L2_cache_size // 4, dtype=torch.int32, device=dev)
    # ~100 us of spin: calibrate cycles per us once
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    torch.cuda._sleep(1_000_000)
    end.record()
    torch.cuda.synchronize()
    cycles = int(1_000_000 * 0.1 / start.elapsed_time(end))
    funcs = {"candidate torch.add(alpha=2)": lambda x, y: torch.add(y, x, alpha=2.0),
             "reference a * 2 + b": lambda x, y: x * 2.0 + y}
    out = {}
    for name, fn in funcs.items():
        for _ in range(5):
            fn(a, b)
        for rep in range(2):  # alternated, twice
            for seq in ("harness", "plain", "harness_no_refill", "plain_refill"):
                out.setdefault(name, {}).setdefault(seq, []).append(round(run(seq, fn, [a, b], fresh, flush, cycles), 3))
    print(json.dumps({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "us_per_kernel": out}, indent=1))


if __name__ == "__main__":
    main()

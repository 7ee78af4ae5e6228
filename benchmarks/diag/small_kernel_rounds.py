"""Why a 5 us kernel timed at 25-35 us in `timing.Bench` rounds while do_bench
says 5 us: the same kernel under variations of the round loop.
Run on a GPU: PYTHONPATH=src python benchmarks/diag/small_kernel_rounds.py"""
import statistics

import torch
from triton.testing import do_bench

from kernelmill.verify.measure.timing import Bench, TimingConfig
from kernelmill.verify.measure.inputs import refill

x = torch.randn(1 << 16, device="cuda")
base = [torch.randn(1 << 16, device="cuda")]
buf = [x]
fn = lambda: torch.relu(buf[0])  # noqa: E731
cfg = TimingConfig()


def med(b, n=300):
    b.warm(25)
    return statistics.median(b.round(n).times_ms) * 1e3


print(f"do_bench: {do_bench(fn, warmup=25, rep=100, return_mode='median') * 1e3:.2f} us")
print(f"Bench, no prepare, no spin: {med(Bench(fn, 'cuda', TimingConfig(launch_cover_us=0))):.2f} us")
print(f"Bench, no prepare: {med(Bench(fn, 'cuda', cfg)):.2f} us")
print(f"Bench, refill prepare: {med(Bench(fn, 'cuda', cfg, prepare=lambda i: refill(buf, base, 1.1))):.2f} us")
big = Bench(fn, "cuda", cfg)
big.flush = torch.empty((256 << 20) // 4, dtype=torch.int32, device="cuda")
print(f"Bench, 256 MB flush: {med(big):.2f} us")
big2 = Bench(fn, "cuda", cfg, prepare=lambda i: refill(buf, base, 1.1))
big2.flush = torch.empty((256 << 20) // 4, dtype=torch.int32, device="cuda")
print(f"Bench, 256 MB flush + refill: {med(big2):.2f} us")
nof = Bench(fn, "cuda", TimingConfig(flush_l2=False))
print(f"Bench, no flush: {med(nof):.2f} us")
# a host that falls behind (as under concurrent builds): 60 us of host work inside each call
import time  # noqa: E402


def slow_host():
    t = time.perf_counter()
    while time.perf_counter() - t < 60e-6:
        pass
    return torch.relu(buf[0])


print(f"slow host, no spin: {med(Bench(slow_host, 'cuda', TimingConfig(launch_cover_us=0))):.2f} us")
print(f"slow host, 100 us spin: {med(Bench(slow_host, 'cuda', TimingConfig(launch_cover_us=100))):.2f} us")
# the flush's own duration
ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
f = torch.empty(torch.cuda.get_device_properties(0).L2_cache_size * 2 // 4, dtype=torch.int32, device="cuda")
ts = []
for _ in range(50):
    ev[0].record(); f.zero_(); ev[1].record(); torch.cuda.synchronize(); ts.append(ev[0].elapsed_time(ev[1]))
print(f"2xL2 flush itself: {statistics.median(ts) * 1e3:.2f} us ({f.numel() * 4 >> 20} MB)")

"""Per-call overhead of CPU timing on a 3 us call (a ReLU on 64K floats, one
thread): single timed calls with and without an input refill before each,
`Bench` as it times now (blocks of calls under `cpu_block_us`), and
`torch.utils.benchmark.Timer`. Run: PYTHONPATH=src python benchmarks/diag/cpu_short_calls.py"""
import statistics
import time

import torch
from torch.utils.benchmark import Timer

from kernelmill.verify.measure.timing import Bench, TimingConfig, set_cpu_threads

set_cpu_threads(1)
x = torch.randn(65536)
src = x.clone()


def single_calls(refill: bool, n: int = 2000) -> float:
    times = []
    for _ in range(n):
        if refill:
            x.copy_(src)
        t0 = time.perf_counter()
        torch.relu(x)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


for rep in range(3):
    b = Bench(lambda: torch.relu(x), "cpu", TimingConfig(), prepare=lambda i: x.copy_(src))
    b.warm(25)
    bench = statistics.median(b.round(1000).median_ms for _ in range(5))
    timer = Timer(stmt="torch.relu(x)", globals={"x": x, "torch": torch}, num_threads=1)
    print(f"single+refill {single_calls(True):.4f} ms  single {single_calls(False):.4f} ms  "
          f"Bench (block of {b.block}) {bench:.4f} ms  Timer {timer.blocked_autorange(min_run_time=0.2).median * 1e3:.4f} ms")

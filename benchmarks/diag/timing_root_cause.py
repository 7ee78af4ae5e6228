"""Why guarded GPU timings came out inflated: measures the suspects one at a time.

1. host launch cost before and after a torch.profiler session with CUDA activity
   (CUPTI may stay attached for the life of the process);
2. a sync between the L2 flush and the start event (launch overhead lands inside
   the timed region) against do_bench's order (flush, record, call: no sync);
3. TF32 / cudnn flags as the two processes set them.
Run on a GPU: python benchmarks/diag/timing_root_cause.py
"""
import statistics
import time

import torch
import torch.nn.functional as F


def host_launch_us(n=2000):
    x = torch.randn(1024, device="cuda")
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        x.add_(1.0)
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / n * 1e6


def events(fn, sync_before_start, reps=200):
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(2 * l2 // 4, dtype=torch.int32, device="cuda")
    for _ in range(10):
        fn()
    out = []
    for _ in range(reps):
        flush.zero_()
        if sync_before_start:
            torch.cuda.synchronize()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        torch.cuda.synchronize()
        out.append(s.elapsed_time(e))
    return statistics.median(out)


def main():
    from triton.testing import do_bench

    x = torch.randn(1 << 16, device="cuda")
    big = torch.randn(4096, 4096, device="cuda")
    conv_in = torch.randn(16, 64, 64, 64, device="cuda")
    w = torch.randn(64, 64, 3, 3, device="cuda")

    def multi():  # five small launches, like an LLM candidate's forward
        y = x.contiguous()
        y = y * 2
        y = torch.relu(y)
        y = y + 1
        return y.sum()

    cases = {"relu_64k": lambda: torch.relu(x), "multi_5_launches": multi,
             "gemm_4096": lambda: big @ big, "conv_64": lambda: F.conv2d(conv_in, w, padding=1)}
    print(f"host launch cost: {host_launch_us():.2f} us per launch (before any profiler)")
    for name, fn in cases.items():
        print(f"{name:18s} sync-before-start {events(fn, True) * 1e3:9.2f} us | no-sync {events(fn, False) * 1e3:9.2f} us"
              f" | do_bench {do_bench(fn, warmup=25, rep=100, return_mode='median') * 1e3:9.2f} us")
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]):
        multi()
        torch.cuda.synchronize()
    print(f"host launch cost: {host_launch_us():.2f} us per launch (after one profiler session)")
    for name, fn in cases.items():
        print(f"{name:18s} sync-before-start {events(fn, True) * 1e3:9.2f} us | no-sync {events(fn, False) * 1e3:9.2f} us"
              f" | do_bench {do_bench(fn, warmup=25, rep=100, return_mode='median') * 1e3:9.2f} us  (after profiler)")
    torch.backends.cudnn.allow_tf32 = True
    print(f"conv_64 with cudnn TF32 on: {events(cases['conv_64'], False) * 1e3:.2f} us")
    print("defaults:", "matmul.allow_tf32", torch.backends.cuda.matmul.allow_tf32, "cudnn.allow_tf32 (set above)")


if __name__ == "__main__":
    main()

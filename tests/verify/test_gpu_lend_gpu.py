"""Lending a run's share of the GPU lock (verify/measure/gpu_lend.py) on the GPU, with the
driver's checkpoint lock: while lent, the candidate's process runs nothing on the GPU (a
timing's empty kernel takes microseconds, not the milliseconds of a time slice beside the
candidate's kernels), and it goes on once the share is back. Each test first shows the case
has the effect it guards against (the candidate's kernels slow an empty kernel down; without
lending, the other run's timing waits), so it cannot pass without checking."""

from __future__ import annotations

import statistics
import subprocess
import sys
import textwrap
import threading
import time

import pytest

pytestmark = pytest.mark.gpu

# a candidate-like process: ~20 ms kernels one after another until stdin closes, then the count
BUSY = textwrap.dedent("""
    import sys, threading, time, torch
    torch.zeros(1, device="cuda"); torch.cuda.synchronize()
    done = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    print("ready", flush=True)
    n = 0
    while not done.is_set():
        torch.cuda._sleep(40_000_000); torch.cuda.synchronize(); n += 1
    print(n, time.monotonic(), flush=True)
""")


def _empty_kernel_us(n=40):
    import torch

    x = torch.zeros(1, device="cuda")
    out = []
    for _ in range(n):
        t = time.perf_counter()
        x.add_(1)
        torch.cuda.synchronize()
        out.append((time.perf_counter() - t) * 1e6)
    return statistics.median(out[5:])


def test_a_lent_share_keeps_the_candidate_off_the_gpu(tmp_path, monkeypatch):
    import torch

    from kernelmill.verify.measure.gpu_lend import Lender, driver_freeze
    from kernelmill.verify.measure.gpulock import SharedUse, gpu_lock

    monkeypatch.setenv("KERNELMILL_GPU_LOCK_DIR", str(tmp_path))
    assert driver_freeze().available, "the driver has no checkpoint lock (before 570?)"
    idle_us = _empty_kernel_us()
    busy = subprocess.Popen([sys.executable, "-c", BUSY], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert busy.stdout.readline().strip() == "ready"
        beside_us = _empty_kernel_us(15)
        # the effect: beside the other context's kernels ours waits for a time slice
        assert beside_us > 20 * idle_us and beside_us > 500, (idle_us, beside_us)
        share = SharedUse("cuda:0")
        lender = Lender(share, lambda: [busy.pid], settle=lambda: torch.cuda.synchronize())
        got = {}

        def timing():
            with gpu_lock("cuda:0", exclusive=True, timeout=30) as held:
                got["at"], got["acquired"] = time.monotonic(), held.acquired
                got["us"] = _empty_kernel_us()

        with share:
            t0 = time.monotonic()
            with lender.waiting():
                t = threading.Thread(target=timing)
                t.start()
                t.join(20)
            t_end = time.monotonic()
        print(f"idle {idle_us:.1f} us, beside {beside_us:.1f} us, lent {got.get('us', 0):.1f} us; "
              f"timing at +{got['at'] - t0:.2f} s; lent {lender.lent} x {lender.lent_s:.2f} s")
        assert got["acquired"] and lender.lent == 1 and got["at"] <= t_end
        assert got["us"] < max(5 * idle_us, 200), got  # nothing of the candidate ran meanwhile
        time.sleep(0.5)
    finally:
        busy.stdin.close()
        last = busy.stdout.read().split()
        busy.wait(30)
    # unlocked again: it went on launching after the lend (CLOCK_MONOTONIC is the system's)
    assert busy.returncode == 0 and int(last[0]) > 0 and float(last[1]) > t_end


SLOW_TASK = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def forward(self, x):
            return torch.relu(x)

    def get_inputs():
        return [torch.randn(4096, 4096)]

    def get_init_inputs():
        return []
""")

# its construction keeps the GPU busy for 8 s (a first call that compiles and benchmarks, say)
SLOW_CAND = textwrap.dedent("""
    import time
    import torch
    import torch.nn as nn

    class ModelNew(nn.Module):
        def __init__(self):
            super().__init__()
            end = time.monotonic() + 8.0
            while time.monotonic() < end:
                torch.cuda._sleep(20_000_000)
                torch.cuda.synchronize()

        def forward(self, x):
            return torch.relu(x)
""")

FAST_CAND = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class ModelNew(nn.Module):
        def forward(self, x):
            return torch.relu(x)
""")


def _two_runs(tmp_path, gpu_lend):
    from kernelmill.records import Sample, Task
    from kernelmill.verify import VerifyConfig, verify_samples

    tasks = {t: Task(task_id=t, code=SLOW_TASK, name=t, level=1) for t in ("t/slow", "t/fast")}
    samples = [Sample("slow", "t/slow", "torch", SLOW_CAND), Sample("fast", "t/fast", "torch", FAST_CAND)]
    cfg = VerifyConfig(device="cuda", trials=2, runs_per_gpu=2, gpu_lend=gpu_lend,
                       cache_dir=str(tmp_path / f"cache_{gpu_lend}"))
    return {v.sample_id: v for v in verify_samples(tasks, samples, cfg)}


def test_another_runs_timing_does_not_wait_for_a_long_first_call(tmp_path):
    off = _two_runs(tmp_path, gpu_lend=False)
    on = _two_runs(tmp_path, gpu_lend=True)
    for name, got in (("off", off), ("on", on)):
        for v in got.values():
            print(name, v.sample_id, v.status, v.speedup, {k: v.phases.get(k) for k in
                  ("timing_lock_wait_s", "gpu_lent", "gpu_lent_s", "gpu_lend_refused", "gpu_lend_escaped")})
    assert all(v.status == "ok" for v in (*off.values(), *on.values()))
    # the effect: without lending the fast run's timing waits out most of the slow one's 8 s
    assert off["fast"].phases["timing_lock_wait_s"] > 3.0
    assert on["fast"].phases["timing_lock_wait_s"] < 2.0
    assert on["slow"].phases.get("gpu_lent", 0) >= 1 and "gpu_lend_escaped" not in on["slow"].phases
    # the fast run's figure is the one it has without the slow run's GPU work beside it
    assert on["fast"].speedup == pytest.approx(off["fast"].speedup, rel=0.15)

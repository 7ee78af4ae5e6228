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
        return [torch.randn(1024, 1024)]

    def get_init_inputs():
        return []
""")

# its construction keeps the GPU busy for 12 s (a first call that compiles and benchmarks, say)
SLOW_CAND = textwrap.dedent("""
    import time
    import torch
    import torch.nn as nn

    class ModelNew(nn.Module):
        def __init__(self):
            super().__init__()
            end = time.monotonic() + 12.0
            while time.monotonic() < end:
                torch.cuda._sleep(20_000_000)
                torch.cuda.synchronize()

        def forward(self, x):
            return torch.relu(x)
""")


def _timing_beside_slow_run(tmp_path, gpu_lend):
    """Verify SLOW_CAND in a thread; once its construction shows on the GPU (our empty kernel
    slowed by a time slice), take the lock as another run's timing does: how long that waited,
    and our empty kernel's time while holding it."""
    from kernelmill.records import Sample, Task
    from kernelmill.verify import VerifyConfig, verify_samples
    from kernelmill.verify.measure.gpulock import gpu_lock

    task = Task(task_id="t/slow", code=SLOW_TASK, name="slow", level=1)
    cfg = VerifyConfig(device="cuda", trials=2, gpu_lend=gpu_lend, cache_dir=str(tmp_path / f"cache_{gpu_lend}"))
    got = {}
    run = threading.Thread(target=lambda: got.update(
        v=verify_samples({task.task_id: task}, [Sample("slow", task.task_id, "torch", SLOW_CAND)], cfg)[0]))
    run.start()
    t0 = time.monotonic()
    while time.monotonic() - t0 < 60 and _empty_kernel_us(8) < 500:
        time.sleep(0.05)
    seen_at = time.monotonic() - t0
    time.sleep(1.0)  # well inside its 12 s
    t1 = time.monotonic()
    # the workers' lock file: the runner gives them CUDA_VISIBLE_DEVICES=<physical index>
    with gpu_lock("cuda:0", exclusive=True, timeout=60, env={"CUDA_VISIBLE_DEVICES": "0"}) as held:
        waited = time.monotonic() - t1
        us = _empty_kernel_us()
    run.join(120)
    v = got["v"]
    print(f"lend {gpu_lend}: construction seen at +{seen_at:.1f} s; the timing waited {waited:.2f} s "
          f"(acquired {held.acquired}); empty kernel {us:.1f} us; verdict {v.status}, "
          f"{ {k: x for k, x in v.phases.items() if k.startswith('gpu_')} }")
    assert seen_at < 50 and held.acquired and v.status == "ok"
    return waited, us, v


def test_another_runs_timing_does_not_wait_for_a_long_first_call(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELMILL_GPU_LOCK_DIR", str(tmp_path / "locks"))
    (tmp_path / "locks").mkdir()
    (tmp_path / "locks" / "kernelmill-gpu-0-0.lock.lend").touch()  # the lender's notes (gpu_lend._note)
    waited_off, _, v_off = _timing_beside_slow_run(tmp_path, gpu_lend=False)
    waited_on, us_on, v_on = _timing_beside_slow_run(tmp_path, gpu_lend=True)
    print((tmp_path / "locks" / "kernelmill-gpu-0-0.lock.lend").read_text()[-3000:])
    # the effect: without lending the timing waits out the rest of the construction
    assert waited_off > 4.0 and not v_off.phases.get("gpu_lent")
    # lent: the timing gets the GPU at once, and nothing of the candidate runs beside it
    assert waited_on < 1.5 and us_on < 200
    assert v_on.phases.get("gpu_lent", 0) >= 1 and "gpu_lend_escaped" not in v_on.phases

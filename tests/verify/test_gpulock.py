"""The timing lock (verify/process/gpulock.py): exclusive against everything,
shared holders side by side, nothing on a CPU. Processes, as in a run."""

from __future__ import annotations

import multiprocessing as mp
import time

from kernelmill.verify.process.gpulock import gpu_lock, lock_path


def _hold(device, exclusive, seconds, started, log):
    with gpu_lock(device, exclusive):
        started.set()
        log.put(("in", exclusive, time.monotonic()))
        time.sleep(seconds)
        log.put(("out", exclusive, time.monotonic()))


def _run(tmp_path, monkeypatch, first_exclusive, second_exclusive):
    monkeypatch.setenv("KERNELMILL_GPU_LOCK_DIR", str(tmp_path))
    ctx = mp.get_context("fork")
    log, s1, s2 = ctx.Queue(), ctx.Event(), ctx.Event()
    a = ctx.Process(target=_hold, args=("cuda:0", first_exclusive, 0.5, s1, log))
    a.start()
    assert s1.wait(10)
    b = ctx.Process(target=_hold, args=("cuda:0", second_exclusive, 0.0, s2, log))
    b.start()
    a.join(10)
    b.join(10)
    events = [log.get(timeout=5) for _ in range(4)]
    return [(k, e) for k, e, _ in sorted(events, key=lambda x: x[2])]


def test_timing_waits_for_a_warm_up_and_a_warm_up_for_timing(tmp_path, monkeypatch):
    # exclusive after shared, and shared after exclusive: strictly one after the other
    assert _run(tmp_path, monkeypatch, False, True) == [("in", False), ("out", False), ("in", True), ("out", True)]
    assert _run(tmp_path, monkeypatch, True, False) == [("in", True), ("out", True), ("in", False), ("out", False)]


def test_warm_ups_overlap(tmp_path, monkeypatch):
    order = _run(tmp_path, monkeypatch, False, False)
    assert order[:2] == [("in", False), ("in", False)]


def test_one_file_per_gpu_and_none_for_a_cpu(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELMILL_GPU_LOCK_DIR", str(tmp_path))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3")
    assert lock_path("cuda") == lock_path("cuda:0") != lock_path("cuda:1")
    assert lock_path("cuda").parent == tmp_path and lock_path("cpu") is None
    with gpu_lock("cpu", exclusive=True):  # nothing to take
        pass


def _hold_forever(device, started):
    with gpu_lock(device, exclusive=False):
        started.set()
        time.sleep(30)


def test_a_holder_that_never_lets_go_costs_the_timeout_only(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELMILL_GPU_LOCK_DIR", str(tmp_path))
    ctx = mp.get_context("fork")
    started = ctx.Event()
    stuck = ctx.Process(target=_hold_forever, args=("cuda:0", started))
    stuck.start()
    try:
        assert started.wait(10)
        with gpu_lock("cuda:0", exclusive=True, timeout=0.3) as held:
            assert not held.acquired and held.wait_s >= 0.3
        stuck.kill()
        stuck.join(10)
        with gpu_lock("cuda:0", exclusive=True, timeout=5) as held:  # the kernel dropped the dead holder's lock
            assert held.acquired
    finally:
        stuck.kill()


def _hold_kind(device, exclusive, behind, seconds, started, log, tag):
    with gpu_lock(device, exclusive, behind_timing_s=None if behind else 0.0):
        started.set()
        log.put(("in", tag, time.monotonic()))
        time.sleep(seconds)
        log.put(("out", tag, time.monotonic()))


def _sequence(log, n):
    events = [log.get(timeout=10) for _ in range(n)]
    return [(k, tag) for k, tag, _ in sorted(events, key=lambda x: x[2])]


def test_a_waiting_timing_goes_before_later_shared_work(tmp_path, monkeypatch):
    # runs sharing a GPU must not keep a timing waiting by handing the shared lock on
    monkeypatch.setenv("KERNELMILL_GPU_LOCK_DIR", str(tmp_path))
    ctx = mp.get_context("fork")
    log = ctx.Queue()
    ev = [ctx.Event() for _ in range(3)]
    a = ctx.Process(target=_hold_kind, args=("cuda:0", False, True, 0.6, ev[0], log, "run1"))
    a.start()
    assert ev[0].wait(10)
    t = ctx.Process(target=_hold_kind, args=("cuda:0", True, True, 0.2, ev[1], log, "timing"))
    t.start()
    time.sleep(0.2)  # the timing now waits for run1
    b = ctx.Process(target=_hold_kind, args=("cuda:0", False, True, 0.1, ev[2], log, "run2"))
    b.start()
    for p in (a, t, b):
        p.join(10)
    assert _sequence(log, 6) == [("in", "run1"), ("out", "run1"), ("in", "timing"), ("out", "timing"),
                                 ("in", "run2"), ("out", "run2")]


def test_a_warm_up_does_not_queue_behind_a_waiting_timing(tmp_path, monkeypatch):
    # a supervisor holding the lock shared may wait for its candidate's warm-up:
    # that warm-up passes a timing that waits (else the three would wait on each other)
    monkeypatch.setenv("KERNELMILL_GPU_LOCK_DIR", str(tmp_path))
    ctx = mp.get_context("fork")
    log = ctx.Queue()
    ev = [ctx.Event() for _ in range(3)]
    a = ctx.Process(target=_hold_kind, args=("cuda:0", False, True, 0.8, ev[0], log, "run1"))
    a.start()
    assert ev[0].wait(10)
    t = ctx.Process(target=_hold_kind, args=("cuda:0", True, True, 0.1, ev[1], log, "timing"))
    t.start()
    time.sleep(0.2)
    w = ctx.Process(target=_hold_kind, args=("cuda:0", False, False, 0.1, ev[2], log, "warmup"))
    w.start()
    for p in (a, t, w):
        p.join(10)
    assert _sequence(log, 6) == [("in", "run1"), ("in", "warmup"), ("out", "warmup"), ("out", "run1"),
                                 ("in", "timing"), ("out", "timing")]


def test_shared_use_lets_go_only_around_its_own_timing(tmp_path, monkeypatch):
    from kernelmill.verify.process.gpulock import SharedUse

    monkeypatch.setenv("KERNELMILL_GPU_LOCK_DIR", str(tmp_path))
    with SharedUse("cuda:0") as share:
        with gpu_lock("cuda:0", exclusive=True, timeout=0.2) as other:  # another process's timing, say
            assert not other.acquired
        with share.pause(), gpu_lock("cuda:0", exclusive=True, timeout=2) as mine:
            assert mine.acquired
        with gpu_lock("cuda:0", exclusive=True, timeout=0.2) as other:
            assert not other.acquired  # held shared again after the pause
    with gpu_lock("cuda:0", exclusive=True, timeout=2) as after:
        assert after.acquired
    with SharedUse("cpu") as share:  # nothing to take on a CPU
        assert share.wait_s == 0.0


def _hold_bounded(device, seconds, started, log, tag):
    with gpu_lock(device, False, behind_timing_s=0.2):
        started.set()
        log.put(("in", tag, time.monotonic()))
        time.sleep(seconds)
        log.put(("out", tag, time.monotonic()))


def test_a_candidate_warm_up_queues_behind_a_waiting_timing_for_a_bounded_time(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELMILL_GPU_LOCK_DIR", str(tmp_path))
    ctx = mp.get_context("fork")
    log = ctx.Queue()
    ev = [ctx.Event() for _ in range(3)]
    a = ctx.Process(target=_hold_kind, args=("cuda:0", False, True, 1.0, ev[0], log, "run1"))
    a.start()
    assert ev[0].wait(10)
    t = ctx.Process(target=_hold_kind, args=("cuda:0", True, True, 0.1, ev[1], log, "timing"))
    t.start()
    time.sleep(0.2)
    t_w = time.monotonic()
    w = ctx.Process(target=_hold_bounded, args=("cuda:0", 0.1, ev[2], log, "warmup"))
    w.start()
    for p in (a, t, w):
        p.join(10)
    events = sorted([log.get(timeout=10) for _ in range(6)], key=lambda x: x[2])
    assert [(k, tag) for k, tag, _ in events] == [("in", "run1"), ("in", "warmup"), ("out", "warmup"), ("out", "run1"),
                                                   ("in", "timing"), ("out", "timing")]
    warm_in = next(ts for k, tag, ts in events if (k, tag) == ("in", "warmup"))
    assert warm_in - t_w >= 0.2  # it did queue first

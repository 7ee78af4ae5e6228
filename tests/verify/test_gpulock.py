"""The timing lock (verify/measure/gpulock.py): exclusive against everything,
shared holders side by side, nothing on a CPU. Processes, as in a run."""

from __future__ import annotations

import os
import multiprocessing as mp
import time

from kernelmill.verify.measure.gpulock import gpu_lock, lock_path


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


def test_a_hold_for_another_process_takes_that_process_s_file(tmp_path, monkeypatch):
    # the runner (all GPUs visible) holds the lock for a sanitizer's process that sees GPU 3
    # as its "cuda:0": the file is that process's, the one its run's timing takes
    monkeypatch.setenv("KERNELMILL_GPU_LOCK_DIR", str(tmp_path))
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    theirs = {"CUDA_VISIBLE_DEVICES": "3"}
    with gpu_lock("cuda:0", exclusive=False, env=theirs):
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")
        with gpu_lock("cuda", exclusive=True, timeout=0.2) as timing:
            assert not timing.acquired  # the timing on that GPU waits for the hold
    assert lock_path("cuda:0", theirs).exists()


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
    from kernelmill.verify.measure.gpulock import SharedUse

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


def _until_a_timing_waits(path, limit_s: float = 20.0) -> None:
    """Until a timing holds the lock's intent file (it does while it waits for the lock)."""
    import fcntl
    import os

    intent = path.with_name(path.name + ".intent")
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if intent.exists():
            fd = os.open(intent, os.O_RDONLY)
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                fcntl.flock(fd, fcntl.LOCK_UN)
            except BlockingIOError:
                return
            finally:
                os.close(fd)
        time.sleep(0.01)
    raise AssertionError("the timing never queued on the intent")


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
    # run1 holds long enough that a loaded machine still starts the other two inside its hold
    a = ctx.Process(target=_hold_kind, args=("cuda:0", False, True, 3.0, ev[0], log, "run1"))
    a.start()
    assert ev[0].wait(10)
    t = ctx.Process(target=_hold_kind, args=("cuda:0", True, True, 0.1, ev[1], log, "timing"))
    t.start()
    _until_a_timing_waits(lock_path("cuda:0"))  # not a sleep: on a loaded machine 0.2 s was not enough
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


def test_each_timing_counts_itself_and_shared_work_does_not(tmp_path, monkeypatch):
    from kernelmill.verify.measure.gpulock import timings_done

    monkeypatch.setenv("KERNELMILL_GPU_LOCK_DIR", str(tmp_path))
    path = lock_path("cuda:0")
    assert timings_done(path) == 0
    with gpu_lock("cuda:0", exclusive=False):
        pass
    assert timings_done(path) == 0
    for n in (1, 2):
        with gpu_lock("cuda:0", exclusive=True):
            pass
        assert timings_done(path) == n
    assert timings_done(lock_path("cuda:1")) == 0  # per GPU


def _timing_after(device, delay, log):
    time.sleep(delay)
    with gpu_lock(device, exclusive=True):
        pass
    log.put(("timed", time.monotonic()))


def test_a_gated_spare_warms_up_after_the_next_timing(tmp_path, monkeypatch):
    """standby.py gives a spare started during a run GATE_ENV; gpulock.wait_for_timing
    holds its warm-up until the run's timing is over, its job arrives, or max_s."""
    import os

    from kernelmill.verify.measure.gpulock import GATE_ENV, gate_env, wait_for_timing

    monkeypatch.setenv("KERNELMILL_GPU_LOCK_DIR", str(tmp_path))
    assert gate_env("cpu", dict(os.environ), 5) == {}
    assert wait_for_timing("cuda:0") == 0.0  # not a gated spare: no wait
    monkeypatch.setenv(GATE_ENV, gate_env("cuda:0", dict(os.environ), 10)[GATE_ENV])
    ctx = mp.get_context("fork")
    log = ctx.Queue()
    p = ctx.Process(target=_timing_after, args=("cuda:0", 0.5, log))
    p.start()
    r, w = os.pipe()
    try:
        waited = wait_for_timing("cuda:0", r)
        done = time.monotonic()
        kind, timed_at = log.get(timeout=10)
        # it waited for the timing, and only for it (max_s is 10: the bound leaves a loaded machine room)
        assert 0.3 < waited < 9.5 and timed_at <= done
        # the count has passed: a second wait with the same start value returns at once
        assert wait_for_timing("cuda:0", r) < 2  # at once, not the 10 s of max_s
        # a job arriving (readable stdin) ends the wait before any timing
        monkeypatch.setenv(GATE_ENV, gate_env("cuda:0", dict(os.environ), 10)[GATE_ENV])
        os.write(w, b"x")
        assert wait_for_timing("cuda:0", r) < 2
        os.read(r, 1)
        # with no timing and no job it gives up after max_s
        monkeypatch.setenv(GATE_ENV, gate_env("cuda:0", dict(os.environ), 0.3)[GATE_ENV])
        assert 0.25 < wait_for_timing("cuda:0", r) < 5
    finally:
        os.close(r)
        os.close(w)
        p.join(10)


def test_the_lock_file_follows_the_given_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELMILL_GPU_LOCK_DIR", str(tmp_path))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    assert lock_path("cuda", {"CUDA_VISIBLE_DEVICES": "1"}) != lock_path("cuda")
    assert lock_path("cuda", {"CUDA_VISIBLE_DEVICES": "1"}) == tmp_path / "kernelmill-gpu-1-0.lock"


def test_a_timing_that_waits_says_who_held_the_lock(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELMILL_GPU_LOCK_DIR", str(tmp_path))
    ctx = mp.get_context("fork")
    log, started = ctx.Queue(), ctx.Event()
    p = ctx.Process(target=_hold, args=("cuda:0", False, 0.6, started, log))
    p.start()
    assert started.wait(10)
    with gpu_lock("cuda:0", exclusive=True, timeout=10) as held:
        assert held.acquired and held.wait_s > 0.2
    assert len(held.holders) == 1 and held.holders[0].startswith(f"{p.pid}: READ"), held.holders
    p.join(10)
    with gpu_lock("cuda:0", exclusive=True) as free:  # nobody there: nothing said
        pass
    assert free.holders == []


def test_a_warm_up_holds_the_gpu_section_only_for_its_gpu_steps(monkeypatch):
    """guards/trace.warm_cuda: the context and the first launch inside `gpu_section`,
    the profiler's start-up (host work, seconds) outside it. Torch's CUDA calls are
    stood in for, so the order is checked on a CPU machine."""
    import contextlib

    import torch

    from kernelmill.verify.measure import inputs as trace_inputs
    from kernelmill.verify.guards import trace

    events, inside = [], []

    @contextlib.contextmanager
    def section(part):
        inside.append(True)
        events.append(("lock", part))
        try:
            yield
        finally:
            inside.pop()
            events.append("unlock")

    real_zeros = torch.zeros

    def zeros(*args, device=None, **kw):
        if device is not None and torch.device(device).type == "cuda":
            events.append(("context", bool(inside)))
            return real_zeros(*args, **kw)
        return real_zeros(*args, device=device, **kw)

    class Profile:
        def __init__(self, cuda):
            self.cuda = cuda

        def __enter__(self):
            events.append(("profiler start", bool(inside)))
            return self

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(torch, "zeros", zeros)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda device=None: None)
    monkeypatch.setattr(torch.cuda, "init", lambda: events.append(("driver start-up", bool(inside))))
    monkeypatch.setattr(trace, "kineto_profile", Profile)
    monkeypatch.setattr(trace, "first_launch", lambda device: events.append(("first launch", bool(inside))))
    monkeypatch.setattr(trace, "warm_thread_pools", lambda device: events.append(("cublas, cudnn", bool(inside))))
    monkeypatch.setattr(trace_inputs, "warm_draws", lambda device: events.append(("draws", bool(inside))))
    assert trace.warm_cuda(torch.device("cuda:0"), section, draws=True) >= 0.0
    assert events == [("driver start-up", False), ("lock", "ctx"), ("context", True), "unlock", ("profiler start", False),
                      ("lock", "libs"), ("first launch", True), ("cublas, cudnn", True), "unlock",
                      ("lock", "kernels"), ("draws", True), "unlock"]
    events.clear()
    assert trace.warm_cuda(torch.device("cpu"), section) == 0.0  # nothing at all on a CPU
    assert events == []


CTX_HOLDER = """
import sys, time
from kernelmill.verify.measure.gpulock import warm_section
while time.monotonic() < float(sys.argv[2]):  # all three ask at the same instant
    time.sleep(0.001)
with warm_section("cuda:0", sys.argv[1], "spare"):
    print(time.monotonic(), flush=True)
    time.sleep(0.8)
    print(time.monotonic(), flush=True)
"""


def test_warm_ups_open_their_contexts_one_at_a_time(tmp_path, monkeypatch):
    """gpulock.warm_section: "ctx" steps of several processes take turns (each holds the
    GPU lock shared, so a timing may come between them); other steps overlap."""
    import subprocess
    import sys

    monkeypatch.setenv("KERNELMILL_GPU_LOCK_DIR", str(tmp_path))

    def spans(part: str) -> list[tuple[float, float]]:
        start = time.monotonic() + 2.0  # after the three interpreters started
        procs = [subprocess.Popen([sys.executable, "-c", CTX_HOLDER, part, str(start)], stdout=subprocess.PIPE,
                                  text=True) for _ in range(3)]
        out = []
        for p in procs:
            text, _ = p.communicate(timeout=60)
            assert p.returncode == 0
            a, b = map(float, text.split())
            out.append((a, b))
        return sorted(out)

    ctx = spans("ctx")
    assert all(b1 <= a2 + 0.01 for (_, b1), (a2, _) in zip(ctx, ctx[1:])), ctx  # one after another
    libs = spans("libs")
    assert any(a2 < b1 for (_, b1), (a2, _) in zip(libs, libs[1:])), libs  # side by side


def test_workers_take_the_lock_in_the_folder_the_verifier_was_given(tmp_path, monkeypatch):
    """KERNELMILL_GPU_LOCK_DIR reaches the workers' scrubbed environment (a KERNELMILL_*
    secret does not), so the runner's processes and a benchmark's sampler use one file."""
    import subprocess
    import sys

    from kernelmill.verify.measure.gpulock import LOCK_DIR_ENV
    from kernelmill.verify.sandbox import scrubbed_env

    folder = tmp_path / "locks"
    folder.mkdir()
    monkeypatch.setenv(LOCK_DIR_ENV, str(folder))
    monkeypatch.setenv("KERNELMILL_SERVE_TOKEN", "secret")
    env = scrubbed_env(home=str(tmp_path))
    assert env[LOCK_DIR_ENV] == str(folder) and "KERNELMILL_SERVE_TOKEN" not in env
    code = ("from kernelmill.verify.measure.gpulock import gpu_lock, lock_path\n"
            "with gpu_lock('cuda:0', exclusive=False) as held: assert held.acquired\n"
            "print(lock_path('cuda:0'))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    used = out.stdout.strip()
    assert used.startswith(str(folder)) and os.path.exists(used)

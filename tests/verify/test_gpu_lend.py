"""A run lends its share of the GPU lock to a waiting timing (verify/measure/gpu_lend.py), on
the CPU: real lock files (the lock is only flock, named after a device string), a stand-in for
the driver's checkpoint lock that records what was locked when. On the GPU, with the driver's
own lock: tests/verify/test_gpu_lend_gpu.py."""

from __future__ import annotations

import fcntl
import os
import threading
import time

import pytest

from kernelmill.verify.measure import gpu_lend
from kernelmill.verify.measure.gpu_lend import (
    Lender,
    candidate_roots,
    timing_waits,
)
from kernelmill.verify.measure.gpulock import SharedUse, gpu_lock, lock_path
from kernelmill.verify.sandbox import processes_below

DEV = "cuda:0"


@pytest.fixture(autouse=True)
def lock_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELMILL_GPU_LOCK_DIR", str(tmp_path))
    monkeypatch.setattr(gpu_lend, "POLL_S", 0.005)
    return tmp_path


class FakeFreeze:
    """The driver's lock of pids that are not real processes: `cuda` have CUDA, `refuse` cannot be locked."""

    available, known_unavailable = True, False

    def __init__(self, cuda, refuse=()):
        self.cuda, self.refuse = set(cuda), set(refuse)
        self.locked: set[int] = set()
        self.log: list[tuple[str, object, float]] = []

    def state(self, pid):
        return (0, int(pid in self.locked)) if pid in self.cuda else (3, -1)

    def running(self, pid):
        return self.state(pid) == (0, 0)

    def lock(self, pid):
        if pid in self.refuse:
            return 801  # the driver's CUDA_ERROR_NOT_SUPPORTED
        self.locked.add(pid)
        self.log.append(("lock", pid, time.monotonic()))
        return 0

    def unlock(self, pid):
        self.locked.discard(pid)
        self.log.append(("unlock", pid, time.monotonic()))


def _timing(freeze, out, started):
    """Another run's timing: queues on the intent, then holds the lock exclusively."""
    started.set()
    with gpu_lock(DEV, exclusive=True, timeout=20) as held:
        out["at"] = time.monotonic()
        out["acquired"] = held.acquired
        out["locked_then"] = set(getattr(freeze, "locked", ()))
        time.sleep(0.1)


def _wait_with_timing(lender, freeze, wait_s=1.5):
    """The run holds its share and waits `wait_s` for its candidate while a timing queues;
    returns when the timing got the GPU and when the wait ended."""
    out, started = {}, threading.Event()
    with lender.share:
        with lender.waiting():
            t = threading.Thread(target=_timing, args=(freeze, out, started))
            t.start()
            started.wait(5)
            time.sleep(wait_s)
        ended = time.monotonic()
    t.join(20)
    return out, ended


def test_timing_waits_sees_a_queued_timing_only(lock_dir):
    assert not timing_waits(DEV) and not timing_waits("cpu")
    path = lock_path(DEV)
    fd = os.open(path.with_name(path.name + ".intent"), os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        assert timing_waits(DEV)
    finally:
        os.close(fd)
    assert not timing_waits(DEV)


def test_a_waiting_run_lends_its_share_with_its_candidate_locked():
    freeze = FakeFreeze(cuda={101, 102})
    lender = Lender(SharedUse(DEV), lambda: [101, 102], freeze=freeze)
    out, ended = _wait_with_timing(lender, freeze)
    # the timing ran during the wait, not after it, and both processes were locked meanwhile
    assert out["acquired"] and out["at"] < ended - 0.5
    assert out["locked_then"] == {101, 102}
    assert freeze.locked == set() and lender.lent == 1 and lender.lent_s > 0.05
    kinds = [k for k, _, _ in freeze.log]
    assert kinds == ["lock", "lock", "unlock", "unlock"]
    lock_t = max(t for k, _, t in freeze.log if k == "lock")
    unlock_t = min(t for k, _, t in freeze.log if k == "unlock")
    assert lock_t < out["at"] < unlock_t
    assert lender.phases()["gpu_lent"] == 1.0


def test_without_lending_the_timing_waits_for_the_share():
    # the case the lending is for: the same wait without it keeps the timing out to its end
    freeze = FakeFreeze(cuda={101})
    lender = Lender(SharedUse(DEV), lambda: [101], freeze=freeze, budget_s=0.0)
    out, ended = _wait_with_timing(lender, freeze, wait_s=0.8)
    assert out["at"] >= ended - 0.01 and lender.lent == 0 and freeze.log == []
    assert lender.phases() == {}


def test_a_process_the_driver_cannot_lock_keeps_the_share():
    freeze = FakeFreeze(cuda={101, 102}, refuse={102})
    lender = Lender(SharedUse(DEV), lambda: [101, 102], freeze=freeze)
    out, ended = _wait_with_timing(lender, freeze, wait_s=0.8)
    assert out["at"] >= ended - 0.01 and lender.lent == 0 and lender.refused >= 1
    assert freeze.locked == set()  # the one it had locked is unlocked again
    assert lender.phases()["gpu_lend_refused"] >= 1


def test_nothing_with_cuda_to_lock_lends_nothing():
    freeze = FakeFreeze(cuda=set())
    lender = Lender(SharedUse(DEV), lambda: [101], freeze=freeze)
    out, ended = _wait_with_timing(lender, freeze, wait_s=0.6)
    assert out["at"] >= ended - 0.01 and lender.lent == 0


def test_a_process_that_opens_cuda_while_lent_is_caught_and_ends_the_lending():
    freeze = FakeFreeze(cuda={101})
    roots = [101]
    lender = Lender(SharedUse(DEV), lambda: list(roots), freeze=freeze)
    real_drop = lender.share._drop

    def drop():  # a new process with CUDA appears once the share is gone
        real_drop()
        roots.append(103)
        freeze.cuda.add(103)

    lender.share._drop = drop
    _wait_with_timing(lender, freeze, wait_s=0.8)
    assert lender.escaped == [103] and not lender.active
    assert lender.phases()["gpu_lend_escaped"] == 1.0


def test_a_process_that_opens_cuda_before_the_share_goes_stops_that_lend():
    freeze = FakeFreeze(cuda={101})
    calls = {"n": 0}

    def roots():  # the second listing (after the locks) finds a new process with CUDA
        calls["n"] += 1
        if calls["n"] == 2:
            freeze.cuda.add(104)
        return [101, 104]

    lender = Lender(SharedUse(DEV), roots, freeze=freeze)
    assert lender.share.__enter__() is lender.share
    try:
        assert lender.lend_once() is False
    finally:
        lender.share.__exit__()
    assert lender.lent == 0 and freeze.locked == set()


def test_the_budget_ends_lending():
    freeze = FakeFreeze(cuda={101})
    lender = Lender(SharedUse(DEV), lambda: [101], freeze=freeze, budget_s=0.05)
    _wait_with_timing(lender, freeze)
    assert lender.lent == 1 and not lender.active  # one lend of ~0.1 s spent it


def test_processes_below_follows_children():
    import subprocess
    import sys

    code = ("import subprocess, sys, time; "
            "c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)']); "
            "print(c.pid, flush=True); time.sleep(30)")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    child = int(p.stdout.readline())
    try:
        assert processes_below([p.pid]) == {p.pid, child}
        assert p.pid in candidate_roots(None, keep=())
        assert p.pid not in candidate_roots(None, keep={p.pid})
        assert 7 in candidate_roots(7, keep={p.pid})
    finally:
        os.kill(child, 9)
        p.kill()
        p.wait()


# the helper (gpu_lend.FREEZER) with a stand-in for the driver: pid 42 has CUDA, others none
STANDIN = r"""
class _Lib:
    def __init__(self):
        self.locked = set()

    def cuCheckpointProcessGetState(self, pid, ref):
        if pid != 42:
            return 3
        ref._obj.value = 1 if pid in self.locked else 0
        return 0

    def cuCheckpointProcessLock(self, pid, args):
        self.locked.add(pid)
        return 0

    def cuCheckpointProcessUnlock(self, pid, _):
        self.locked.discard(pid)
        return 0


lib = _Lib()
"""


@pytest.fixture
def standin(tmp_path):
    path = tmp_path / "standin.py"
    path.write_text(STANDIN)
    return str(path)


def test_the_driver_is_asked_through_a_helper_process_kept_apart(standin):
    from kernelmill.verify.process.launch import KEEP

    f = gpu_lend.DriverFreeze(standin=standin)
    try:
        assert f.available and f.proc.pid in KEEP  # neither the candidate's nor a leftover
        assert f.proc.pid not in candidate_roots(None, keep=KEEP)
        assert f.running(42) and not f.running(7) and f.state(7) == (3, -1)
        assert f.lock(42) == 0 and not f.running(42) and f.state(42) == (0, 1)
        f.unlock(42)
        assert f.running(42)
        pid = f.proc.pid
    finally:
        f.close()
    assert pid not in KEEP and f.state(42) == (-1, -1)  # gone: every answer an error, nothing lent


def test_a_command_without_the_token_is_not_obeyed(standin):
    # a process that got hold of the helper's pipe (a candidate's must not: gpu_lend.FREEZER)
    f = gpu_lend.DriverFreeze(standin=standin)
    try:
        assert f.lock(42) == 0 and not f.running(42)
        for forged in ("unlock 42\n", "0 1 unlock 42\n", f"{'0' * 32} 1 unlock 42\n", "garbage"):
            f.proc.stdin.write(forged)
        f.proc.stdin.write("\n")
        f.proc.stdin.flush()
        # still locked, and the next answer is the one asked for (no answer to a forged line)
        assert f.state(42) == (0, 1) and f.available
    finally:
        f.close()


def test_a_helper_that_does_not_answer_ends_the_lending(standin, monkeypatch):
    monkeypatch.setattr(gpu_lend, "ANSWER_TIMEOUT_S", 0.3)
    monkeypatch.setattr(gpu_lend, "LOCK_TIMEOUT_MS", 0)
    silent = "import sys\nsys.stdin.readline()\nprint('ready', flush=True)\nimport time\ntime.sleep(30)\n"
    f = gpu_lend.DriverFreeze(code=silent)
    try:
        assert f.available
        assert f.state(42) == (-1, -1) and not f.available
    finally:
        f.close()


def test_a_helper_without_the_driver_makes_lending_unavailable():
    f = gpu_lend.DriverFreeze(code="print('unavailable', flush=True)")
    assert not f.available and f.proc is None
    assert isinstance(gpu_lend.DriverFreeze().available, bool)  # this machine's own answer, whatever it is


def test_the_helper_starts_in_the_watcher_not_on_the_runs_path(standin):
    f = gpu_lend.DriverFreeze(standin=standin)
    try:
        lender = Lender(SharedUse(DEV), lambda: [42], freeze=f)
        assert lender.active and f.proc is None  # nothing started to enter the wait
        with lender.share, lender.waiting():
            pass
        assert f.proc is None  # no timing came: never started
        out, ended = _wait_with_timing(lender, f, wait_s=1.0)
        assert f.proc is not None and lender.lent == 1 and out["at"] < ended - 0.3
    finally:
        f.close()

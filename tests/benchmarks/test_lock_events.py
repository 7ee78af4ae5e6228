"""benchmarks/diag/lock_events.py and the events file gpulock writes: which of our holds kept
a timing waiting, checked on holds of known lengths (synthetic, then real processes)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from benchmark_support import REPO as ROOT

sys.path.insert(0, str(ROOT / "benchmarks" / "diag"))
import lock_events  # noqa: E402
from lock_events import Hold  # noqa: E402


def test_summary_of_known_holds():
    holds = [
        Hold(1, False, "run-pre", 0.0, 0.0, 4.0, True),
        Hold(2, False, "spare-ctx", 1.0, 1.0, 3.0, True),
        Hold(3, True, "timing", 2.0, 4.0, 5.0, True),  # waited 2-4: run-pre all of it, spare-ctx 2-3
        Hold(4, False, "spare-libs", 5.0, 5.5, 6.0, True),  # after the timing: a warm-up alone
        Hold(1, False, "run-post", 5.0, 5.0, 5.5, True),
    ]
    s = lock_events.summarize(holds, 0.0, 8.0)
    assert s["timings"] == 1
    assert s["timing_waits_s"] == {"total": 2.0, "run-pre": 2.0, "spare-ctx": 1.0}
    assert s["cover"] == {"any": 0.75, "shared_only": 0.625, "timing": 0.125, "warm_ups_only": 0.0625}
    assert s["held"]["run-pre"] == {"holds": 1, "held_s": 4.0, "median_hold_s": 4.0, "waited_s": 0.0}
    assert s["held"]["spare-libs"]["waited_s"] == 0.5
    # shared only: 0-4 and 5-6 (5 s); one run in 4.5 s of it (0-4, 5-5.5), none in 0.5 s
    assert s["runs_at_once"] == {"0": 0.1, "1": 0.9}
    # alone: run-pre 0-1 and 3-4 (spare-ctx beside it 1-3), the timing 4-5, run-post 5-5.5 (spare-libs
    # asked at 5, held from 5.5), spare-libs 5.5-6
    assert s["alone_s"] == {"run-pre": 2.0, "timing": 1.0, "run-post": 0.5, "spare-libs": 0.5}
    assert [(t["label"], t["alone_s"]) for t in s["alone_top"]] == [
        ("run-pre", 2.0), ("timing", 1.0), ("run-post", 0.5), ("spare-libs", 0.5)]
    # a window cuts the holds it crosses
    assert lock_events.summarize(holds, 1.0, 2.0)["held"]["run-pre"]["held_s"] == 1.0


def _held(lock) -> bool:
    from kernelmill.verify.measure.gpulock import flock_holders

    try:
        return bool(flock_holders(os.stat(lock).st_ino))
    except FileNotFoundError:
        return False


HOLDER = """
import os, sys, time
from kernelmill.verify.measure.gpulock import SharedUse, gpu_lock
role, asking = sys.argv[1], sys.argv[2]
if role == "run":
    with SharedUse("cuda:0", label="run-pre") as share:
        while not os.path.exists(asking):  # the timing asks while the run holds the lock
            time.sleep(0.01)
        time.sleep(0.4)
        with share.pause(then="run-post"):
            time.sleep(0.2)
        time.sleep(0.3)
else:
    open(asking, "w").close()
    with gpu_lock("cuda:0", exclusive=True, label="timing"):
        time.sleep(0.3)
"""


def test_processes_log_their_holds_while_the_file_exists(tmp_path):
    env = {**os.environ, "KERNELMILL_GPU_LOCK_DIR": str(tmp_path)}
    from kernelmill.verify.measure.gpulock import events_path, lock_path

    lock = lock_path("cuda:0", env={"CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES", "all")})
    lock = tmp_path / lock.name
    # no events file: nothing is logged, and none is made
    subprocess.run([sys.executable, "-c", HOLDER, "timing", str(tmp_path / "a0")], env=env, check=True, timeout=60)
    assert not events_path(lock).exists()

    path = lock_events.start(lock)
    asking = tmp_path / "asking"
    run = subprocess.Popen([sys.executable, "-c", HOLDER, "run", str(asking)], env=env)
    while not events_path(lock).exists() or not _held(lock):  # the run holds first
        time.sleep(0.01)
    subprocess.run([sys.executable, "-c", HOLDER, "timing", str(asking)], env=env, check=True, timeout=60)
    assert run.wait(timeout=60) == 0
    holds = lock_events.read(path, stop=True)
    assert not path.exists()
    assert sorted(h.label for h in holds) == ["run-post", "run-pre", "timing"]
    timing = next(h for h in holds if h.label == "timing")
    pre = next(h for h in holds if h.label == "run-pre")
    assert timing.exclusive and timing.acquired and not pre.exclusive
    assert timing.held >= pre.let_go - 0.02  # it waited for the run's shared hold to end
    s = lock_events.summarize(holds)
    # the timing asked while the run held the lock, and got it when the run paused (0.4 s on)
    assert s["timing_waits_s"]["run-pre"] > 0.35
    assert s["timing_waits_s"]["run-pre"] == pytest.approx(s["timing_waits_s"]["total"], abs=0.05)


def test_the_lenders_notes_are_counted(tmp_path, monkeypatch):
    # the notes verify/measure/gpu_lend.py writes beside the lock, read back as the watch reads them
    monkeypatch.setenv("KERNELMILL_GPU_LOCK_DIR", str(tmp_path))
    from kernelmill.verify.measure import gpu_lend
    from kernelmill.verify.measure.gpulock import lock_path

    events = lock_events.start(lock_path("cuda:0"))
    gpu_lend._note("cuda:0", "seen below=[5, 6] cuda=[5]")
    gpu_lend._note("cuda:0", "lent [5] 1.2500 s")
    gpu_lend._note("cuda:0", "seen below=[7] cuda=[]")
    gpu_lend._note("cuda:0", "refused 9 801")
    gpu_lend._note("cuda:0", "refused 10 801")
    gpu_lend._note("cuda:0", "refused 11")  # 0.5.26's form, without the driver's answer
    gpu_lend._note("cuda:0", "error OSError: boom")
    got = lock_events.read_lend(events, stop=True)
    assert {k: got[k] for k in ("seen", "lent", "lent_s", "refused", "refused_answers", "nothing", "errors")} == {
        "seen": 2, "lent": 1, "lent_s": 1.25, "refused": 3, "refused_answers": {"801": 2, "?": 1}, "nothing": 1,
        "errors": ["OSError: boom"]}
    assert len(got["lines"]) == 7 and not lock_events.lend_path(events).exists()
    gpu_lend._note("cuda:0", "seen below=[1] cuda=[1]")  # the file gone: nothing is written
    assert lock_events.read_lend(events) == {}

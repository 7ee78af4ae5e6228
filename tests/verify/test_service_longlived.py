"""`kernelmill serve` keeps one verifier across requests (warm spares carry
over), and a worker killed with SIGKILL mid-request loses and duplicates no
verdict."""

from __future__ import annotations

import os
import signal
import sqlite3
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest
from kernelmill.records import Sample
from kernelmill.verify import VerifyConfig
from kernelmill.verify.service import ServiceConfig, VerifyService

from verify_support import RELU_TASK, candidate


def _service(tmp_path: Path, standby: int) -> VerifyService:
    cfg = VerifyConfig(device="cpu", trials=2, time=False, cache_dir=str(tmp_path / "cache"), standby=standby)
    return VerifyService(cfg, ServiceConfig(port=0), store=str(tmp_path / "store.sqlite"),
                         tasks={RELU_TASK.task_id: RELU_TASK})


def test_consecutive_requests_use_the_spares_the_last_one_started(tmp_path):
    # the spare for request N+1 is started while request N runs; it must outlive request N
    svc = _service(tmp_path, standby=1)
    try:
        base = Sample("s", RELU_TASK.task_id, "torch", candidate("return x.clamp_min(0)"))
        for i in range(3):
            (v,) = svc.verify([], [replace(base, sample_id=f"s{i}", code=f"# {i}\n" + base.code)])
            assert v.status == "ok", (i, v.message)
    finally:
        svc.close()


def _workers_running_a_job(kind: bytes = b"guarded") -> list[int]:
    """Our run processes, found through /proc: ``worker guarded JOB cpu``, or a resident
    supervisor (named ``km resident``; forked by the zygote, so its command line is the
    zygote's) busy with a job: a job folder of its own holds the candidate's code."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            comm = Path(f"/proc/{pid}/comm").read_text().strip()
            cwd = Path(os.readlink(f"/proc/{pid}/cwd"))
        except OSError:
            continue
        if not _descends_from_us(int(pid)):  # another test run's workers on this machine are not ours to kill
            continue
        if kind == b"resident":
            if comm == "km resident" and any(cwd.glob("job-*/candidate/candidate.py")):
                found.append(int(pid))
        elif b"kernelmill.verify.process.worker" in cmd and kind in cmd:
            found.append(int(pid))
    return found


def _descends_from_us(pid: int) -> bool:
    me = os.getpid()
    while pid > 1:
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return False
        if pid == me:
            return True
    return False


@pytest.mark.parametrize("kind", ["guarded", "resident"])
def test_kill_9_of_a_worker_mid_request_loses_nothing_and_duplicates_nothing(tmp_path, kind):
    # a run worker per candidate (standby 0), or a resident supervisor (the default) killed mid-job
    svc = _service(tmp_path, standby=0 if kind == "guarded" else -1)
    slow = Sample("slow", RELU_TASK.task_id, "torch",
                  candidate("time.sleep(2.0)\nreturn x.clamp_min(0)", imports="import time"))
    fast = Sample("fast", RELU_TASK.task_id, "torch", candidate("return x.clamp_min(0)"))
    killed: list[int] = []

    def killer():
        deadline = time.time() + 120
        while time.time() < deadline and not killed:
            for pid in _workers_running_a_job(kind.encode()):
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            time.sleep(0.2)

    try:
        t = threading.Thread(target=killer)
        t.start()
        first = svc.verify([], [slow, fast])
        t.join()
        assert killed, "no run process was found to kill"
        assert [v.sample_id for v in first] == ["slow", "fast"]  # one verdict per sample, in order
        again = svc.verify([], [slow, fast])
        assert [(v.sample_id, v.status) for v in again] == [(v.sample_id, v.status) for v in first]
        assert all(v.cached for v in again)  # answered from the store, not run again
        with sqlite3.connect(tmp_path / "store.sqlite") as db:
            tables = [r[0] for r in db.execute("select name from sqlite_master where type='table'")]
            rows = sum(db.execute(f"select count(*) from {t}").fetchone()[0] for t in tables if "verdict" in t)
        assert rows == 2, rows  # one stored verdict per candidate: nothing lost, nothing twice
    finally:
        svc.close()

"""A spawned candidate's process says when its warm-up is over (channel.WARM_LINE), and
the supervisor waits for that without its share of the GPU lock (supervisor: a run
that took a spare still warming up kept the other run's timing waiting)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kernelmill.verify.process.channel import WARM_LINE
from kernelmill.verify.process.launch import Launched


@pytest.fixture
def pipe():
    r, w = os.pipe()
    yield r, w
    for fd in (r, w):
        try:
            os.close(fd)
        except OSError:
            pass


def _launched(tmp_path: Path, report: int, spawned: bool = True) -> Launched:
    proc = subprocess.Popen([sys.executable, "-c", "pass"]) if spawned else None
    if proc is not None:
        proc.wait()
    # a spawned process warms up; so does one forked on CUDA (launch._fork with a device)
    return Launched(tmp_path, tmp_path, None, -1, proc, report, warms=spawned)


def test_the_warm_line_is_read_and_nothing_after_it(tmp_path, pipe):
    r, w = pipe
    os.write(w, WARM_LINE + b'\n{"ready": true}\n')
    assert _launched(tmp_path, r).wait_warm(5.0) is True
    os.close(w)
    assert os.read(r, 100) == b'{"ready": true}\n'  # left for the report reader


def test_no_line_in_time_or_an_ended_process_goes_on(tmp_path, pipe):
    r, w = pipe
    assert _launched(tmp_path, r).wait_warm(0.05) is False  # nothing came: the deadline
    os.write(w, b'{"ready')
    os.close(w)
    assert _launched(tmp_path, r).wait_warm(5.0) is False  # EOF before a whole line


def test_a_candidate_forked_on_a_cpu_has_no_warm_up_to_wait_for(tmp_path, pipe):
    r, _ = pipe
    assert _launched(tmp_path, r, spawned=False).wait_warm(5.0) is False


def test_the_candidate_process_says_it_is_warm_before_it_reads_its_start(tmp_path):
    """candidate.main on a CPU device (its warm-up does nothing there): the line comes
    first, then the process waits for its start byte; EOF on stdin ends it."""
    rr, rw = os.pipe()
    try:
        import kernelmill

        env = {**os.environ, "PYTHONPATH": str(Path(kernelmill.__file__).resolve().parents[1])}  # this code
        proc = subprocess.Popen([sys.executable, "-m", "kernelmill.verify.process.candidate",
                                 str(tmp_path / "job.json"), "cpu", str(rw)], stdin=subprocess.PIPE,
                                pass_fds=(rw,), cwd=tmp_path, env=env)
        os.close(rw)
        launched = Launched(tmp_path, tmp_path, None, -1, proc, rr, warms=True)
        assert launched.wait_warm(120.0) is True
        proc.stdin.close()  # no start byte: it exits without reading a job
        assert proc.wait(timeout=60) == 0
    finally:
        os.close(rr)

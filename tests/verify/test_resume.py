"""kill -9 in the middle of `kernelmill verify`, then run it again: every
sample ends with exactly one verdict, and a finished set re-runs with no work."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from kernelmill.records import Sample, write_jsonl

from verify_support import RELU_TASK, candidate



def _sigint_default() -> None:
    """The child takes Ctrl-C even where this test runs as a background job
    (a non-interactive shell starts those with SIGINT ignored, which children inherit)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)

def _cli(*args, env):
    return [sys.executable, "-m", "kernelmill.cli", *args]


@pytest.mark.slow
def test_kill_and_resume(tmp_path):
    tasks = tmp_path / "tasks" / "level1"
    tasks.mkdir(parents=True)
    (tasks / "1_ReLU.py").write_text(RELU_TASK.code)
    samples = [Sample(f"s{i}", "level1/1_ReLU", "torch",
                      candidate(f"return x.clamp_min(0) * {1 + (i % 2) * 0.5}", imports=f"import time\ntime.sleep(0.4)  # {i}"))
               for i in range(8)]
    write_jsonl(tmp_path / "samples.jsonl", samples)
    out = tmp_path / "verdicts.jsonl"
    env = {**os.environ, "KERNELMILL_CACHE": str(tmp_path / "cache")}
    args = _cli("verify", str(tmp_path / "tasks"), str(tmp_path / "samples.jsonl"), "-o", str(out),
                "--device", "cpu", "--trials", "1", "--workers", "1", "--store", str(tmp_path / "s.sqlite"), env=env)
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline:
        if out.exists() and out.read_text().count("\n") >= 2:
            break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    first = out.read_text().count("\n")
    assert 2 <= first < len(samples)

    res = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert f"{first} of {len(samples)} samples already have verdicts" in res.stderr
    ids = [json.loads(line)["sample_id"] for line in out.read_text().splitlines()]
    assert sorted(ids) == sorted(s.sample_id for s in samples)  # none lost, none twice
    statuses = {json.loads(line)["sample_id"]: json.loads(line)["status"] for line in out.read_text().splitlines()}
    assert statuses["s0"] == "ok" and statuses["s1"] == "incorrect"

    # a finished set: a new output file, but the store answers every sample
    out2 = tmp_path / "again.jsonl"
    res = subprocess.run([a if a != str(out) else str(out2) for a in args], env=env, capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr
    assert "cached 8" in res.stderr
    assert sorted(json.loads(line)["status"] for line in out2.read_text().splitlines()) == \
        sorted(statuses.values())
    # no worker survived the kill
    left = subprocess.run(["pgrep", "-f", str(tmp_path / "cache")], capture_output=True, text=True)
    assert left.stdout.strip() == ""


def test_ctrl_c_stops_cleanly_and_rerun_finishes(tmp_path):
    tasks = tmp_path / "tasks" / "level1"
    tasks.mkdir(parents=True)
    (tasks / "1_ReLU.py").write_text(RELU_TASK.code)
    samples = [Sample(f"s{i}", "level1/1_ReLU", "torch",
                      candidate("return x.clamp_min(0)", imports=f"import time\ntime.sleep(0.5)  # {i}"))
               for i in range(6)]
    write_jsonl(tmp_path / "samples.jsonl", samples)
    out = tmp_path / "verdicts.jsonl"
    env = {**os.environ, "KERNELMILL_CACHE": str(tmp_path / "cache")}
    args = _cli("verify", str(tmp_path / "tasks"), str(tmp_path / "samples.jsonl"), "-o", str(out),
                "--device", "cpu", "--trials", "1", "--workers", "1", "--store", str(tmp_path / "s.sqlite"), env=env)
    proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_sigint_default)
    deadline = time.time() + 120
    while time.time() < deadline and not (out.exists() and out.read_text().count("\n") >= 1):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr[-2000:]
    assert "interrupted" in stderr and "Traceback" not in stderr
    left = subprocess.run(["pgrep", "-f", str(tmp_path / "cache")], capture_output=True, text=True)
    assert left.stdout.strip() == ""
    res = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    ids = [json.loads(line)["sample_id"] for line in out.read_text().splitlines()]
    assert sorted(ids) == sorted(s.sample_id for s in samples)

"""The store and a verdicts file never answer for other code or other settings (issue 45,
target 3): an edited candidate under the same id, a raised timeout, --rerun, and an id
given twice with different code."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from kernelmill.records import Sample, Task, write_jsonl
from kernelmill.verify import VerifyConfig, input_key
from kernelmill.verify.store import result_key

from verify_support import RELU_TASK, candidate


def _setup(tmp_path, samples):
    tasks = tmp_path / "tasks" / "level1"
    tasks.mkdir(parents=True, exist_ok=True)
    (tasks / "1_ReLU.py").write_text(RELU_TASK.code)
    write_jsonl(tmp_path / "samples.jsonl", samples)
    env = {**os.environ, "KERNELMILL_CACHE": str(tmp_path / "cache")}
    out = tmp_path / "verdicts.jsonl"

    def run(*extra):
        args = [sys.executable, "-m", "kernelmill.cli", "verify", str(tmp_path / "tasks"), str(tmp_path / "samples.jsonl"),
                "-o", str(out), "--device", "cpu", "--trials", "1", "--workers", "1",
                "--store", str(tmp_path / "s.sqlite"), *extra]
        return subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)

    def rows():
        return {json.loads(line)["sample_id"]: json.loads(line) for line in out.read_text().splitlines()}
    return run, rows, out


def test_the_key_covers_code_task_and_every_setting_that_changes_a_verdict():
    task, s = Task("t", "code"), Sample("a", "t", "torch", "x")
    base = VerifyConfig(device="cpu")
    k = input_key(task, s, base.answer_key("cpu"))
    assert k != input_key(task, Sample("a", "t", "torch", "y"), base.answer_key("cpu"))
    assert k != input_key(Task("t", "other"), s, base.answer_key("cpu"))
    for change in ({"run_timeout": 999.0}, {"build_timeout": 5.0}, {"guards": "off"}, {"trials": 2},
                   {"profile": "full"}, {"memory_limit_gb": 2.0}, {"timing": {"numerics": "strict"}}):
        other = VerifyConfig.from_dict({"device": "cpu", **change}, "test")
        assert input_key(task, s, other.answer_key("cpu")) != k, change
    assert input_key(task, s, VerifyConfig.from_dict({"device": "cpu", "workers": 7}, "t").answer_key("cpu")) == k
    assert result_key(task, s, base.answer_key("cpu"), "cpu0") != result_key(task, s, base.answer_key("cpu"), "gpu")


def test_edited_code_under_the_same_id_is_verified_again(tmp_path):
    good = candidate("return x.clamp_min(0)")
    run, rows, out = _setup(tmp_path, [Sample("a", "level1/1_ReLU", "torch", good),
                                        Sample("b", "level1/1_ReLU", "torch", good)])
    res = run()
    assert res.returncode == 0, res.stderr
    assert {k: v["status"] for k, v in rows().items()} == {"a": "ok", "b": "ok"}
    write_jsonl(tmp_path / "samples.jsonl", [Sample("a", "level1/1_ReLU", "torch", candidate("return x * 2")),
                                             Sample("b", "level1/1_ReLU", "torch", good)])
    res = run()
    assert res.returncode == 0, res.stderr
    assert "1 verdict(s)" in res.stderr and "changed" in res.stderr
    assert "1 of 2 samples already have verdicts" in res.stderr
    got = rows()
    assert out.read_text().count("\n") == 2  # the stale line was replaced, not kept beside the new one
    assert got["a"]["status"] == "incorrect" and got["b"]["status"] == "ok"


@pytest.mark.slow
def test_a_raised_timeout_is_not_answered_by_the_old_timeout_and_rerun_forces(tmp_path):
    slow = candidate("return x.clamp_min(0)", imports="import time\ntime.sleep(4)")  # > the first limit (2 s) under any load
    run, rows, _ = _setup(tmp_path, [Sample("slow", "level1/1_ReLU", "torch", slow)])
    res = run("--run-timeout", "2")
    assert res.returncode == 0, res.stderr
    assert rows()["slow"]["status"] == "timeout"
    res = run("--run-timeout", "60")
    assert res.returncode == 0, res.stderr
    assert rows()["slow"]["status"] == "ok" and not rows()["slow"]["cached"]
    res = run("--run-timeout", "60")  # the same settings: answered by OUT, nothing run
    assert "1 of 1 samples already have verdicts" in res.stderr
    res = run("--run-timeout", "60", "--rerun")
    assert res.returncode == 0, res.stderr
    assert "--rerun" in res.stderr and rows()["slow"]["status"] == "ok" and not rows()["slow"]["cached"]


def test_one_id_with_two_codes_is_refused_with_both_lines(tmp_path):
    run, _, out = _setup(tmp_path, [Sample("a", "level1/1_ReLU", "torch", candidate("return x.clamp_min(0)")),
                                    Sample("b", "level1/1_ReLU", "torch", candidate("return x.clamp_min(0)")),
                                    Sample("a", "level1/1_ReLU", "torch", candidate("return x * 2"))])
    res = run()
    assert res.returncode == 2
    assert "samples.jsonl:3: sample id 'a' is also at line 1 with other code" in res.stderr
    assert not out.exists()

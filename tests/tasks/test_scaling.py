"""KernelBench problems on a CPU (issue 45, target 1): a derived small profile by a fixed
rule, recorded in each verdict; a task too big for the machine said so before any
candidate runs, with the numbers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kernelmill.records import Sample, Task, write_jsonl
from kernelmill.tasks.scaling import fit_problem, needs, size_constants, small_profile, with_small_profile

KB_TASKS = Path(__file__).resolve().parents[2].parent / "shared" / "baselines" / "kernelbench" / "tasks"

BIG = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def __init__(self, features):
            super().__init__()
            self.ln = nn.LayerNorm(features)

        def forward(self, x, y):
            return self.ln(x) + y

    batch_size = 64
    seq_len = 8192
    features = 256
    kernel_size = 3
    N = 1024 * 4
    input_shape = (4096,)

    def get_inputs():
        return [torch.randn(batch_size, seq_len, features), torch.randn(seq_len, features)]

    def get_init_inputs():
        return [features]
""")


def test_the_rule_shrinks_batch_and_length_and_leaves_features_alone():
    assert size_constants(BIG) == {"batch_size": 64, "seq_len": 8192, "N": 4096, "input_shape": (4096,)}
    task = Task("t/big", BIG)
    before = needs(task).bytes_moved
    sp = small_profile(task)
    assert set(sp) <= {"batch_size", "seq_len"} and sp  # N and input_shape are not used by the program's inputs...
    after = needs(task, sp)
    assert after.error is None and after.bytes_moved <= 64 << 20 < before
    assert small_profile(task) == sp  # deterministic
    assert with_small_profile(task).sizes["small"] == sp
    own = Task("t/own", BIG, sizes={"small": {"batch_size": 2}})
    assert with_small_profile(own) is own  # a task's own profile wins


def test_a_task_that_cannot_fit_is_named_with_its_numbers():
    task = Task("t/big", BIG)
    why = fit_problem(task, {}, "cpu", memory_gb=1.0, run_timeout=300)
    assert why and "GB a call" in why and "1 GB limit" in why
    assert fit_problem(task, small_profile(task), "cpu", memory_gb=16.0, run_timeout=300) is None


@pytest.mark.skipif(not KB_TASKS.exists(), reason="KernelBench's problems are beside the checkout in shared/")
def test_kernelbench_level1_problems_verify_on_a_cpu_in_minutes(tmp_path):
    tasks = tmp_path / "kb" / "level1"
    tasks.mkdir(parents=True)
    for name in ("19_ReLU.py", "40_LayerNorm.py", "100_HingeLoss.py"):
        (tasks / name).write_text((KB_TASKS / "level1" / name).read_text())
    head = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n"
    cands = {
        ("level1/19_ReLU", "ok"): "class ModelNew(nn.Module):\n    def forward(self, x):\n        return x.clamp_min(0)\n",
        ("level1/19_ReLU", "incorrect"): "class ModelNew(nn.Module):\n    def forward(self, x):\n        return x - 0.5\n",
        ("level1/40_LayerNorm", "ok"): (
            "class ModelNew(nn.Module):\n    def __init__(self, shape):\n        super().__init__()\n"
            "        self.ln = nn.LayerNorm(shape)\n    def forward(self, x):\n        return self.ln(x)\n"),
        ("level1/40_LayerNorm", "incorrect"): (
            "class ModelNew(nn.Module):\n    def __init__(self, shape):\n        super().__init__()\n"
            "    def forward(self, x):\n        return (x - x.mean()) / x.std()\n"),
        ("level1/100_HingeLoss", "ok"): (
            "class ModelNew(nn.Module):\n    def forward(self, p, t):\n"
            "        return F.relu(1 - p * t).mean()\n"),
        ("level1/100_HingeLoss", "incorrect"): (
            "class ModelNew(nn.Module):\n    def forward(self, p, t):\n        return (1 - p * t).sum()\n"),
    }
    samples = [Sample(f"{tid.split('/')[1]}__{exp}", tid, "torch", head + code, meta={"expect": exp})
               for (tid, exp), code in cands.items()]
    write_jsonl(tmp_path / "s.jsonl", samples)
    env = {**os.environ, "KERNELMILL_CACHE": str(tmp_path / "cache")}
    out = tmp_path / "v.jsonl"
    res = subprocess.run([sys.executable, "-m", "kernelmill.cli", "verify", str(tmp_path / "kb"), str(tmp_path / "s.jsonl"),
                          "-o", str(out), "--device", "cpu", "--trials", "2", "--store", str(tmp_path / "s.sqlite")],
                         env=env, capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stderr[-3000:]
    got = {json.loads(line)["sample_id"]: json.loads(line) for line in out.read_text().splitlines()}
    for s in samples:
        v = got[s.sample_id]
        assert v["status"] == s.meta["expect"], (s.sample_id, v["status"], v["message"][:300])
    relu = got["19_ReLU__ok"]["measurement"]["sizes"]
    assert relu["profile"] == "small" and relu["overrides"]["dim"] < 393216 and "64 MB" in relu["rule"]
    # at the files' own sizes the run says, before any candidate, what does not fit
    res = subprocess.run([sys.executable, "-m", "kernelmill.cli", "verify", str(tmp_path / "kb"), str(tmp_path / "s.jsonl"),
                          "-o", str(tmp_path / "full.jsonl"), "--device", "cpu", "--profile", "full", "--dry-run"],
                         env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "task level1/19_ReLU at the full profile moves 12.0 GB a call" in " ".join(res.stderr.split())


def test_the_size_check_runs_beside_the_candidates_and_still_prints(monkeypatch):
    """`verify` starts its candidates while the tasks' fit check traces them (a GRU's trace took
    10.5 s on cuda-l1, all of it before the first candidate); its lines still come, and its own
    failure is a note, not the run's end."""
    import io
    import threading

    from rich.console import Console

    from kernelmill.cli import runs

    started, release = threading.Event(), threading.Event()

    def slow_check(tasks, samples, config):
        started.set()
        assert release.wait(60)
        return ["task x at the full profile moves 9.0 GB a call"]

    monkeypatch.setattr(runs, "warn_unfit", slow_check)
    check = runs.UnfitCheck({}, [], None)
    assert started.wait(60)
    assert check.lines is None  # the caller went on while the check ran
    release.set()
    assert check.finish() == ["task x at the full profile moves 9.0 GB a call"]

    buf = io.StringIO()
    monkeypatch.setattr(runs, "err", Console(file=buf, width=200))
    monkeypatch.setattr(runs, "warn_unfit", lambda *a: 1 / 0)
    assert runs.UnfitCheck({}, [], None).finish() == []
    assert "the tasks' size check failed: ZeroDivisionError" in buf.getvalue()

"""The first hour of a new user (issue 17): the README's commands name real
tasks, and `verify` says clearly what it will and will not do."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kernelmill.cli import app
from kernelmill.tasks import load_tasks

ROOT = Path(__file__).resolve().parents[1]
CODE = "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n"


def samples_file(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def sample(sid, task_id="level1/01_ReLU", language="torch"):
    return {"sample_id": sid, "task_id": task_id, "language": language, "code": CODE}


def test_readme_task_ids_exist():
    builtin = load_tasks("builtin").by_id()
    ids = re.findall(r"kernelmill tasks show builtin (\S+)", (ROOT / "README.md").read_text())
    assert ids and all(i in builtin for i in ids), ids
    result = CliRunner().invoke(app, ["tasks", "show", "--help"])
    shown = re.findall(r"(level\d/\w+)", result.output)
    assert shown and all(i in builtin for i in shown), shown


@pytest.mark.parametrize("content,says", [("", "it is empty"), ("not json\n{also not\n", "none of its 2 lines")])
def test_verify_refuses_an_empty_or_garbage_samples_file(tmp_path, content, says):
    path = tmp_path / "samples.jsonl"
    path.write_text(content)
    result = CliRunner().invoke(app, ["verify", "builtin", str(path), "-o", str(tmp_path / "v.jsonl")])
    assert result.exit_code == 2 and "no samples in" in result.output and says in result.output
    assert not (tmp_path / "v.jsonl").exists()


def test_verify_dry_run_with_filters(tmp_path):
    path = samples_file(tmp_path / "s.jsonl", [sample("a"), sample("b", language="cuda"), sample("c", "level1/99_Nope"),
                                               sample("d", "level2/01_Gemm_Bias_ReLU"), sample("e", language="cpp")])
    out = tmp_path / "v.jsonl"
    run = lambda *extra: CliRunner().invoke(app, ["verify", "builtin", str(path), "-o", str(out), "--device", "cpu",
                                                  "--dry-run", *extra])
    result = run()
    assert result.exit_code == 0, result.output
    assert "5 of 5 samples to verify (cpp 1, cuda 1, torch 3)" in result.output
    assert "1 not run: cuda candidates need a CUDA GPU" in result.output
    assert "name tasks not in builtin: level1/99_Nope" in result.output
    assert not out.exists()
    assert "2 of 2 samples" in run("--tasks", "level1/01_ReLU", "--languages", "torch,cuda").output
    assert "1 of 1 samples to verify (torch 1)" in run("--tasks", "level2/").output
    assert "3 of 3 samples" in run("--limit", "3").output
    result = run("--languages", "tilelang")
    assert result.exit_code == 2 and "no sample left" in result.output


def test_verify_progress_off_a_terminal_is_one_line_per_candidate(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELMILL_CACHE", str(tmp_path / "cache"))
    path = samples_file(tmp_path / "s.jsonl", [sample("x1", "level9/missing"), sample("x2", "level9/missing")])
    result = CliRunner().invoke(app, ["verify", "builtin", str(path), "-o", str(tmp_path / "v.jsonl"), "--device", "cpu",
                                      "--store", str(tmp_path / "store.sqlite")])
    assert result.exit_code == 0, result.output
    lines = [ln for ln in result.output.splitlines() if ln.startswith("verify ")]
    assert [ln.split()[:4] for ln in lines] == [["verify", "1/2", "runtime_error", "[unknown_task]"],
                                                 ["verify", "2/2", "runtime_error", "[unknown_task]"]]
    assert sorted(ln.split()[-1] for ln in lines) == ["x1", "x2"]
    assert "verify: 2 candidates verified: runtime_error 2; cached 0" in result.output
    # the summary counts them as not run, naming the task
    assert "not run" in result.output and "level9/missing" in result.output


def test_verify_says_where_its_wall_went_and_when_headers_were_built_from_scratch(tmp_path, monkeypatch):
    # the run's own accounting (verify_samples stats) in the last line; a build that parsed
    # torch's headers from scratch (no pch_used) gets the hint to prepare them once
    from kernelmill.cli import runs
    from kernelmill.records import Verdict

    def fake_verify(tasks, samples, config, store=None, progress=False, on_verdict=None, stats=None, rerun=False):
        builds = [{"compiled": ["kernel", "merged"]}, {"compiled": ["merged"], "pch_used": ["merged"]}, {}]
        for s, build in zip(samples, builds):
            on_verdict(Verdict(sample_id=s.sample_id, task_id=s.task_id, status="ok", measurement={"build": build}))
        stats.update({"startup_s": 0.1, "batch_s": 2.0, "close_s": 0.2, "spares_started": 3})

    monkeypatch.setattr(runs, "verify_samples", fake_verify)
    monkeypatch.setenv("KERNELMILL_CACHE", str(tmp_path / "cache"))
    path = samples_file(tmp_path / "s.jsonl", [sample(f"x{i}", "level1/01_ReLU") for i in range(3)])
    result = CliRunner().invoke(app, ["verify", "builtin", str(path), "-o", str(tmp_path / "v.jsonl"), "--device", "cpu",
                                      "--store", str(tmp_path / "store.sqlite")])
    assert result.exit_code == 0, result.output
    assert "verifier start-up 0.1 s, candidates 2.0 s, close 0.2 s, 3 spare run workers started" in result.output
    assert "since the command started: imports and tasks" in result.output
    assert "1 build(s) compiled torch's headers from scratch" in result.output

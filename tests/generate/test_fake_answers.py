"""The fake server's --answers: per task id, scripted completions, so a dry run of
generate -> verify gives real, varied candidates."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kernelmill.cli import app
from kernelmill.generate.fake_server import AnswersError, FakeOpenAIServer, ScriptedResponder, load_answers
from kernelmill.records import Sample, read_jsonl
from kernelmill.tasks import load_tasks

CAND = Path(__import__("kernelmill").__file__).parent / "tasks" / "builtin" / "candidates" / "level1"


def _answers(tmp_path) -> Path:
    ok = (CAND / "01_ReLU" / "torch__ok.py").read_text()
    bad = (CAND / "01_ReLU" / "torch__runtime_error.py").read_text()
    gelu = (CAND / "02_GELU" / "cuda__ok.py").read_text()
    rows = [{"task_id": "level1/01_ReLU", "completion": f"```python\n{ok}```", "reasoning": "relu is max(x, 0)"},
            {"task_id": "level1/01_ReLU", "completion": f"```python\n{bad}```"},
            {"task_id": "level1/02_GELU", "completion": f"```python\n{gelu}```"}]
    p = tmp_path / "answers.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


def test_generate_against_scripted_answers(tmp_path):
    answers = _answers(tmp_path)
    tasks = load_tasks("builtin")
    responder = ScriptedResponder(load_answers(answers), {t.task_id: t.code for t in tasks})
    out = tmp_path / "samples.jsonl"
    with FakeOpenAIServer(responder) as srv:
        res = CliRunner().invoke(app, ["generate", "builtin", "-o", str(out), "--model", "fake-model",
                                       "--base-url", srv.url, "-n", "2", "--template", "torch", "--concurrency", "1",
                                       "--tasks", "level1/01_ReLU,level1/02_GELU,level1/06_Sum", "--no-progress"])
    assert res.exit_code == 0, res.output
    samples = list(read_jsonl(out, Sample))
    by_task: dict[str, list[str]] = {}
    for s in samples:
        by_task.setdefault(s.task_id, []).append(s.code or "")
    # both of ReLU's scripted answers, one each; GELU's one answer twice; Sum has none: no code
    assert sorted(c.strip() for c in by_task["level1/01_ReLU"]) == sorted(
        [(CAND / "01_ReLU" / "torch__ok.py").read_text().strip(),
         (CAND / "01_ReLU" / "torch__runtime_error.py").read_text().strip()])
    assert [c.strip() for c in by_task["level1/02_GELU"]] == [(CAND / "02_GELU" / "cuda__ok.py").read_text().strip()] * 2
    assert not any(by_task.get("level1/06_Sum", []))
    assert responder.served == {"level1/01_ReLU": 2, "level1/02_GELU": 2}


def test_answers_file_errors_name_the_line(tmp_path):
    p = tmp_path / "a.jsonl"
    p.write_text(json.dumps({"task_id": "x", "completion": "y"}) + "\n{oops\n")
    with pytest.raises(AnswersError, match=r"a.jsonl:2"):
        load_answers(p)
    p.write_text(json.dumps({"task_id": "no/such_task", "completion": "y"}) + "\n")
    with pytest.raises(AnswersError, match="no/such_task"):
        ScriptedResponder(load_answers(p), {"level1/01_ReLU": "code"})


def test_module_main_refuses_unknown_task_ids(tmp_path):
    p = tmp_path / "a.jsonl"
    p.write_text(json.dumps({"task_id": "level9/nope", "completion": "y"}) + "\n")
    proc = subprocess.run([sys.executable, "-m", "kernelmill.generate.fake_server", "--answers", str(p)],
                          capture_output=True, text=True, timeout=120, env={**os.environ})
    assert proc.returncode == 2
    assert "level9/nope" in proc.stderr


def test_builtin_answers_are_the_suites_correct_torch_candidates(tmp_path):
    from kernelmill.generate.fake_server import builtin_answers
    from kernelmill.tasks.builtin import builtin_samples

    answers = builtin_answers()
    ok = {s.task_id: s.code.strip() for s in builtin_samples(["torch"]) if s.meta["expect"] == "ok"}
    assert answers and set(answers) == set(ok)
    tasks = load_tasks("builtin")
    responder = ScriptedResponder(answers, {t.task_id: t.code for t in tasks})
    out = tmp_path / "samples.jsonl"
    with FakeOpenAIServer(responder) as srv:
        res = CliRunner().invoke(app, ["generate", "builtin", "-o", str(out), "--model", "fake-model",
                                       "--base-url", srv.url, "-n", "1", "--template", "torch", "--concurrency", "1",
                                       "--tasks", "level1/01_ReLU,level1/06_Sum", "--no-progress"])
    assert res.exit_code == 0, res.output
    by_task = {s.task_id: s.code.strip() for s in read_jsonl(out, Sample)}
    assert by_task == {"level1/01_ReLU": ok["level1/01_ReLU"], "level1/06_Sum": ""}

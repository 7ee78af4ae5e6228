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


def test_builtin_answers_cover_every_task_with_a_correct_a_wrong_and_a_broken_answer(tmp_path):
    from kernelmill.generate.fake_server import builtin_answers
    from kernelmill.tasks.builtin import builtin_samples

    answers = builtin_answers()
    tasks = load_tasks("builtin")
    assert set(answers) == {t.task_id for t in tasks.tasks}
    assert all(len(a) == 3 and all(r.reasoning for r in a) for a in answers.values())
    ok = {s.task_id: s.code.strip() for s in builtin_samples(["torch"]) if s.meta["expect"] == "ok"}
    assert answers["level1/01_ReLU"][0].content.strip() == f"```python\n{ok['level1/01_ReLU']}\n```"
    responder = ScriptedResponder(answers, {t.task_id: t.code for t in tasks})
    out = tmp_path / "samples.jsonl"
    with FakeOpenAIServer(responder) as srv:
        res = CliRunner().invoke(app, ["generate", "builtin", "-o", str(out), "--model", "fake-model",
                                       "--base-url", srv.url, "-n", "3", "--template", "torch", "--concurrency", "1",
                                       "--no-progress"])
    assert res.exit_code == 0, res.output
    samples = read_jsonl(out, Sample)
    assert len(samples) == 3 * len(tasks.tasks)
    assert all(s.code.strip() and "class ModelNew" in s.code and s.reasoning for s in samples)  # parse errors: 0
    # and the three kinds verify as they say, on a CPU (a small task of each level)
    from kernelmill.verify import VerifyConfig, verify_samples

    picked = [s for s in samples if s.task_id in ("level1/06_Sum", "level2/09_SwiGLU", "level3/02_SmallCNN")]
    verdicts = verify_samples(tasks.by_id(), picked, VerifyConfig(device="cpu", trials=1, time=False,
                                                                   cache_dir=str(tmp_path / "cache")))
    by_task: dict[str, list[str]] = {}
    for s, v in zip(picked, verdicts):
        by_task.setdefault(s.task_id, []).append(v.status)
    for tid, statuses in by_task.items():
        assert statuses[0] == "ok" and statuses[1] == "incorrect" and statuses[2] in ("compile_error", "runtime_error"), \
            (tid, statuses)

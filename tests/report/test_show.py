"""`kernelmill show SAMPLE_ID`: the sample, its task, verdict and reasons."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from kernelmill.cli import app
from kernelmill.records import Verdict, read_jsonl
from kernelmill.verify.store import ResultStore

DATA = Path(__file__).parent / "data" / "demo_cpu"
S, V = str(DATA / "samples.jsonl"), str(DATA / "verdicts.jsonl")


def test_show_prints_task_verdict_reasons_and_code():
    res = CliRunner().invoke(app, ["show", "builtin/level1/24_Softmax/triton__incorrect", "-s", S, "-v", V,
                                   "-t", "builtin"])
    assert res.exit_code == 0, res.output
    out = res.output
    assert "task     level1/24_Softmax (Softmax), level 1" in out
    assert "verdict  incorrect: ran, but an output differed" in out
    assert "worst at (7, 241): got 0, expected 1" in out  # the verdict's message, whole
    assert "flag     timing_skipped (harness note)" in out
    assert "--- code (triton) ---" in out and "def forward" in out


def test_show_unknown_id_suggests_close_ones():
    res = CliRunner().invoke(app, ["show", "builtin/level1/01_ReLU/torch_ok", "-s", S, "-v", V])
    assert res.exit_code == 2
    assert "not found" in res.output and "builtin/level1/01_ReLU/torch__ok" in res.output


def test_show_reads_the_verdict_from_a_store(tmp_path):
    verdict = next(v for v in read_jsonl(V, Verdict) if v.sample_id.endswith("01_ReLU/torch__timeout"))
    store = ResultStore(tmp_path / "verdicts.sqlite")
    store.put("some-key", verdict)
    store.close()
    res = CliRunner().invoke(app, ["show", verdict.sample_id, "-s", S, "--store", str(tmp_path / "verdicts.sqlite"),
                                   "--no-code"])
    assert res.exit_code == 0, res.output
    assert "verdict  timeout" in res.output and "process group killed" in res.output
    assert "--- code" not in res.output

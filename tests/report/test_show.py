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


def test_show_and_the_report_card_say_what_ran():
    from kernelmill.records import Verdict
    from kernelmill.report.provenance import provenance_lines

    prov = {"kernels": [{"symbol": "fused_relu(float*)", "per_call": 1.0, "share": 0.8, "origin": "own"},
                        {"symbol": "Memcpy DtoD (Device -> Device)", "per_call": 1.0, "share": 0.2, "origin": "aten"}],
            "kernels_more": 0, "launches_per_call": 2, "streams": 1, "by_origin": {"own": 0.8, "aten": 0.2}}
    v = Verdict("s", "t", "ok", compiled=True, correct=True, speedup=2.0, speedup_kernelbench=1.7,
                sol_fraction=0.25, provenance={"candidate": prov, "reference": None})
    lines = provenance_lines(v)
    assert lines[0].startswith("KernelBench's convention: 1.700x")
    assert "0.25 of the task's bound" in lines[1]
    assert "candidate: 2 launches per call on 1 stream(s); GPU time by origin: own 80%, aten 20%" == lines[2]
    assert "own" in lines[3] and "fused_relu" in lines[3]
    from kernelmill.report.show import SampleView, render_text

    text = render_text(SampleView("s", None, v, None, []))
    assert "ran      candidate: 2 launches per call" in text

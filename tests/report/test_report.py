"""`kernelmill report` without a browser: inputs, not-run verdicts, the Markdown/CSV
summaries against `compute`, and the command's exits."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kernelmill.cli import app
from kernelmill.records import Sample, Task, Verdict, read_jsonl, to_dict
from kernelmill.report import compute
from kernelmill.report.inputs import ReportInputError, join, load_inputs, read_verdicts
from kernelmill.report.summary import breakdown, csv_text, markdown

DEMO = Path(__file__).parent / "data" / "demo_cpu"


def write(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r if isinstance(r, dict) else to_dict(r)) + "\n" for r in rows))
    return path


def test_cuda_on_cpu_is_not_run_and_not_a_failure():
    ok = Verdict("a0", "A", "ok", compiled=True, correct=True, speedup=2.0, level=1)
    cuda = Verdict("a1", "A", "runtime_error", flags=["unsupported_device"], level=1,
                   message="cuda candidates need a CUDA GPU; this run's device is cpu")
    only_cuda = Verdict("b0", "B", "runtime_error", flags=["unsupported_device"], level=1)
    m = compute([ok, cuda, only_cuda], ps=[1], ks=[1])
    assert (m.tasks, m.samples, m.exec) == (1, 1, 1.0)
    assert m.statuses["runtime_error"] == 0
    assert m.not_run == {"unsupported_device": 2}


def test_unknown_task_ids_are_named_and_left_out():
    tasks = [Task("level1/01_ReLU", "code", level=1, op_type="single")]
    verdicts = [Verdict("s1", "level1/01_ReLU", "ok", correct=True, speedup=1.5),
                Verdict("s2", "level1/19_ReLU", "ok", correct=True, speedup=3.0)]
    inputs = join(verdicts, None, tasks, "builtin")
    assert inputs.unknown_tasks == ["level1/19_ReLU"]
    assert any("level1/19_ReLU" in w and "builtin" in w for w in inputs.warnings)
    assert verdicts[0].level == 1  # filled in from the task
    m = compute(inputs.verdicts, ps=[1], ks=[1])
    assert (m.tasks, m.samples, m.not_run_tasks) == (1, 1, ["level1/19_ReLU"])


def test_a_speedup_that_is_not_a_number_names_the_line(tmp_path):
    good = to_dict(Verdict("s1", "A", "ok", correct=True, speedup=1.0))
    path = write(tmp_path / "v.jsonl", [good, {**good, "sample_id": "s2"}, {**good, "sample_id": "s3", "speedup": "fast"}])
    with pytest.raises(ReportInputError, match=r"v\.jsonl:3: .*speedup must be a number.*'fast'"):
        read_verdicts(path)
    result = CliRunner().invoke(app, ["metrics", str(path)])
    assert result.exit_code == 2 and "v.jsonl:3" in result.output


def test_a_truncated_last_line_is_only_a_warning(tmp_path):
    path = write(tmp_path / "v.jsonl", [Verdict("s1", "A", "ok", correct=True, speedup=1.0)])
    with open(path, "a") as fh:
        fh.write('{"sample_id": "s2", "task_')
    verdicts, problems = read_verdicts(path)
    assert len(verdicts) == 1 and "truncated" in problems[0].message


def test_markdown_and_csv_carry_the_computed_numbers():
    inputs = load_inputs(DEMO / "verdicts.jsonl", DEMO / "samples.jsonl", "builtin")
    b = breakdown(inputs, ps=[0, 1], ks=[1], resamples=200)
    overall = compute(inputs.verdicts, ps=[0, 1], ks=[1], resamples=200)
    assert b.overall.exec == overall.exec and b.overall.exec_ci == overall.exec_ci
    rows = {(r["grouping"], r["group"]): r for r in csv.DictReader(io.StringIO(csv_text(b)))}
    assert float(rows["level", "all"]["exec"]) == pytest.approx(overall.exec, abs=1e-6)
    assert float(rows["level", "all"]["fast_1_lo"]) == pytest.approx(overall.fast_ci["1"][0], abs=1e-6)
    # by language: each language's exec is compute() over that language's verdicts
    samples = {s.sample_id: s for s in read_jsonl(DEMO / "samples.jsonl", Sample)}
    for lang in ("cpp", "torch", "triton"):
        own = [v for v in inputs.verdicts if samples[v.sample_id].language == lang]
        assert float(rows["language", lang]["exec"]) == pytest.approx(compute(own, [1], [1], resamples=0).exec, abs=1e-6)
        assert int(rows["language", lang]["samples"]) == len(own)
    assert {g for (k, g) in rows if k == "op_type"} == {"single", "fusion", "network"}
    md = markdown(b, inputs)
    assert f"| **all** | {overall.tasks} | {overall.samples} | {100 * overall.exec:.1f}% [" in md
    assert "## by language" in md and "| triton |" in md


def test_report_command_writes_page_and_summaries(tmp_path):
    out = tmp_path / "r" / "report.html"
    result = CliRunner().invoke(app, ["report", str(DEMO / "verdicts.jsonl"), "--samples", str(DEMO / "samples.jsonl"),
                                      "--tasks", "builtin", "-o", str(out), "--resamples", "100"])
    assert result.exit_code == 0, result.output
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page
    # self-contained: no stylesheet, script or image fetched from anywhere
    assert 'src="http' not in page and 'href="http' not in page and "@import" not in page
    assert out.with_suffix(".md").exists() and out.with_suffix(".csv").exists()


def test_report_command_refuses_empty_and_missing_files(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    for path, text in ((empty, "no verdicts"), (tmp_path / "nope.jsonl", "not found")):
        result = CliRunner().invoke(app, ["report", str(path), "-o", str(tmp_path / "x.html")])
        assert result.exit_code == 2 and text in result.output

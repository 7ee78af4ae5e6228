"""The curation commands end to end, as a user runs them, bad input included."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kernelmill.cli import app
from kernelmill.records import Sample, Verdict, write_jsonl

RELU = '''import torch
import torch.nn as nn

class Model(nn.Module):
    """Applies ReLU to the input tensor of arbitrary shape, elementwise, and returns it."""
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)

batch_size = 16
dim = 16384

def get_inputs():
    return [torch.randn(batch_size, dim)]

def get_init_inputs():
    return []
'''

FUSED = '''import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, n)
    def forward(self, x):
        return torch.sigmoid(self.fc(x)) * 2.0

def get_inputs():
    return [torch.randn(8, 64)]

def get_init_inputs():
    return [64]
'''

runner = CliRunner()


def run(*args):
    result = runner.invoke(app, [str(a) for a in args])
    return result


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("curate")
    tasks = d / "tasks" / "level1"
    tasks.mkdir(parents=True)
    (tasks / "1_ReLU.py").write_text(RELU)
    (tasks / "2_LinearSigmoid.py").write_text(FUSED)
    samples, verdicts = [], []
    for tid in ("level1/1_ReLU", "level1/2_LinearSigmoid"):
        for i in range(4):
            sid = f"{tid}#{i}"
            samples.append(Sample(sid, tid, "cuda", f"// kernel {i} for {tid}\nint k{i} = {i};\n" * 3,
                                  reasoning=f"reasoning {i}", reasoning_tokens=1000 * (i + 1)))
            verdicts.append(Verdict(sid, tid, "ok", compiled=True, correct=i != 2, speedup=[3.0, 1.5, None, 7.0][i]))
    samples.append(samples[0])                                              # duplicated sample id
    samples.append(Sample("orphan", "level1/1_ReLU", "cuda", "x", reasoning=None))  # no verdict
    verdicts.append(Verdict("ghost", "level1/1_ReLU", "ok"))                 # no sample
    write_jsonl(d / "samples.jsonl", samples)
    write_jsonl(d / "verdicts.jsonl", verdicts)
    with open(d / "samples.jsonl", "a") as fh:
        fh.write("{not json\n")
    bench = d / "bench" / "level1"
    bench.mkdir(parents=True)
    (bench / "19_ReLU.py").write_text(RELU.replace("batch_size", "bs"))
    return d


def test_curate_concur_reports_bad_input_and_writes_parts(data):
    out = data / "curated.jsonl"
    r = run("curate", data / "samples.jsonl", data / "verdicts.jsonl", "--recipe", "concur", "-o", out,
            "--tasks", data / "tasks", "--size", "6", "--single-share", "0.5")
    assert r.exit_code == 0, r.output
    for text in ("1 samples without a verdict", "1 verdicts without a sample", "repeated sample ids",
                 "samples without reasoning_tokens", "samples.jsonl:11"):
        assert text in r.output
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    parts = {row["sample_id"]: row["source_part"] for row in rows}
    # (a): for both tasks the shortest (#0) is not the fastest (#3 at 7.0) -> nothing; (b): both #3
    assert parts["level1/1_ReLU#3"] == "b" and parts["level1/2_LinearSigmoid#3"] == "b"
    c = [sid for sid, p in parts.items() if p == "c"]
    assert c and all(s.startswith("level1/1_ReLU") for s in c)  # ReLU is the single-operator task
    assert rows[0]["task_code"] and rows[0]["op_type_origin"] == "traced"
    meta = json.loads((data / "curated.jsonl.meta.json").read_text())
    assert meta["params"]["recipe"] == "concur" and meta["counts"]["join"]["duplicate_sample_ids"] == 1
    excluded = [json.loads(x) for x in (data / "curated.excluded.jsonl").read_text().splitlines()]
    assert {e["reason"] for e in excluded} == {"no_verdict", "verdict_without_sample", "duplicate_sample_id"}


def test_ablation_recipe(data):
    out = data / "maxlen.jsonl"
    r = run("curate", data / "samples.jsonl", data / "verdicts.jsonl", "--recipe", "max-len", "-o", out, "--size", "1")
    assert r.exit_code == 0, r.output
    [row] = [json.loads(x) for x in out.read_text().splitlines()]
    assert row["reasoning_tokens"] == 4000 and row["source_part"] == "max-len"


def test_concur_without_tasks_is_a_clear_error(data):
    r = run("curate", data / "samples.jsonl", data / "verdicts.jsonl", "-o", data / "x.jsonl")
    assert r.exit_code == 2 and "task types" in r.output and "Traceback" not in r.output


@pytest.mark.parametrize("content", ["", "{broken\n"])
def test_empty_input_is_an_error_not_a_trace(data, content):
    empty = data / "empty.jsonl"
    empty.write_text(content)
    r = run("curate", empty, data / "verdicts.jsonl", "--recipe", "random", "-o", data / "y.jsonl")
    assert r.exit_code == 2 and "no samples" in r.output and "Traceback" not in r.output
    r = run("dedup", empty, "-o", data / "y.jsonl")
    assert r.exit_code == 2 and "no records" in r.output


def test_missing_file(data):
    r = run("analyze", data / "nope.jsonl", data / "verdicts.jsonl", "-o", data / "an")
    assert r.exit_code == 2 and "file not found" in r.output


def test_pipeline_dedup_decontam_export_subset(data):
    cur = data / "curated.jsonl"
    if not cur.exists():
        test_curate_concur_reports_bad_input_and_writes_parts(data)
    dd = data / "dedup.jsonl"
    r = run("dedup", cur, "-o", dd, "--method", "exact")
    assert r.exit_code == 0, r.output
    dc = data / "clean.jsonl"
    r = run("decontaminate", dd, "--against", data / "bench", "-o", dc, "--drop")
    assert r.exit_code == 0, r.output
    kept = [json.loads(x) for x in dc.read_text().splitlines()]
    dropped = [json.loads(x) for x in (data / "clean.excluded.jsonl").read_text().splitlines()]
    assert dropped and all(d["benchmark_task"] == "level1/19_ReLU" for d in dropped)
    assert all(k["task_id"] != "level1/1_ReLU" for k in kept)
    ex = data / "sft"
    r = run("export", dc, "--format", "sft-messages", "-o", ex)
    assert r.exit_code == 0, r.output
    card = (ex / "README.md").read_text()
    for stage in ("**curate**", "**dedup**", "**decontaminate**", "**export**"):
        assert stage in card
    r = run("subset", cur, "--size", "1", "--size", "2", "-o", data / "subsets")
    assert r.exit_code == 0, r.output
    assert len((data / "subsets" / "subset_2.jsonl").read_text().splitlines()) == 2


def test_export_kto_from_samples_and_verdicts(data):
    out = data / "kto"
    r = run("export", data / "samples.jsonl", "--verdicts", data / "verdicts.jsonl", "--tasks", data / "tasks",
            "--format", "kto", "-o", out)
    assert r.exit_code == 0, r.output
    rows = [json.loads(x) for x in (out / "train.jsonl").read_text().splitlines()]
    assert len(rows) == 8 and sum(r["label"] for r in rows) == 6  # #2 incorrect in both tasks


def test_difficulty_and_analyze(data):
    r = run("difficulty", data / "samples.jsonl", data / "verdicts.jsonl", "-o", data / "diff.json")
    assert r.exit_code == 0, r.output
    table = json.loads((data / "diff.json").read_text())
    assert table["buckets"]["easy"]["tasks"] == 2  # ARL 2500 in both tasks
    r = run("analyze", data / "samples.jsonl", data / "verdicts.jsonl", "-o", data / "an")
    assert r.exit_code == 0, r.output
    assert (data / "an" / "length_vs_speedup.png").exists() and (data / "an" / "analysis.json").exists()


def test_task_types_command(data):
    r = run("task-types", data / "tasks")
    assert r.exit_code == 0, r.output
    assert "single" in r.output and "fusion" in r.output

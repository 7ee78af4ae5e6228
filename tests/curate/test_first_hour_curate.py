"""First-hour fixes of the curation commands: concur's --tasks said up front,
subset writes what it can, dedup's exclusion file carries the records,
decontaminate matches ids and names and warns about rows without a task program."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from kernelmill.cli import app
from kernelmill.curate.decontam import DecontamConfig, decontaminate
from kernelmill.records import Task

RELU = "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n"


def run(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def _rows(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_concur_needs_tasks_before_reading_anything(tmp_path):
    # the samples file does not even exist: the missing --tasks is said first
    r = run("curate", tmp_path / "nope.jsonl", tmp_path / "nope2.jsonl", "-o", tmp_path / "x.jsonl")
    assert r.exit_code == 2
    assert "concur recipe needs --tasks" in r.output and "file not found" not in r.output


def test_subset_writes_the_sizes_it_can_and_names_the_rest(tmp_path):
    src = _rows(tmp_path / "cur.jsonl", [{"sample_id": f"s{i}", "code": f"x = {i}"} for i in range(5)])
    r = run("subset", src, "--size", "2", "--size", "9", "--size", "4", "-o", tmp_path / "sub")
    assert r.exit_code == 1
    assert "not written: size 9 (only 5 rows" in r.output
    assert len((tmp_path / "sub" / "subset_2.jsonl").read_text().splitlines()) == 2
    assert len((tmp_path / "sub" / "subset_4.jsonl").read_text().splitlines()) == 4
    assert not (tmp_path / "sub" / "subset_9.jsonl").exists()


def test_dedup_exclusion_file_carries_the_dropped_records(tmp_path):
    rows = [{"sample_id": "a", "task_id": "t", "code": "int x = 1;", "reasoning": "r1"},
            {"sample_id": "b", "task_id": "t", "code": "int x = 1; // same", "reasoning": "r2"},
            {"sample_id": "c", "task_id": "t", "code": "int y = 2;"}]
    src = _rows(tmp_path / "in.jsonl", rows)
    r = run("dedup", src, "-o", tmp_path / "out.jsonl", "--method", "exact")
    assert r.exit_code == 0, r.output
    [ex] = [json.loads(x) for x in (tmp_path / "out.excluded.jsonl").read_text().splitlines()]
    assert ex["id"] == "b" and ex["duplicate_of"] == "a" and ex["record"] == rows[1]


def test_decontaminate_matches_ids_and_names():
    bench = [Task("level1/19_ReLU", RELU, name="ReLU"), Task("level2/7_Conv3d_GELU", "import torch\n", name="")]
    rows = [{"sample_id": "1", "task_id": "level1/19_ReLU", "code": "completely different text"},
            {"sample_id": "2", "task_id": "mysuite/3_relu", "code": "nothing alike"},
            {"sample_id": "3", "task_id": "x/9", "task_name": "Conv3d GELU", "code": "nope"},
            {"sample_id": "4", "task_id": "x/10", "code": "unrelated program text"}]
    res = decontaminate(rows, bench, DecontamConfig(drop=True))
    got = {e["id"]: (e["benchmark_task"], e["matches"][0]["test"]) for e in res.excluded}
    assert got == {"1": ("level1/19_ReLU", "same_id"), "2": ("level1/19_ReLU", "same_name"),
                   "3": ("level2/7_Conv3d_GELU", "same_name")}
    assert [r["sample_id"] for r in res.kept] == ["4"]
    assert res.without_task_code == 4


def test_decontaminate_warns_about_rows_without_task_code(tmp_path):
    bench = tmp_path / "bench" / "level1"
    bench.mkdir(parents=True)
    (bench / "19_ReLU.py").write_text(RELU + "def get_inputs():\n    return []\ndef get_init_inputs():\n    return []\n")
    src = _rows(tmp_path / "in.jsonl", [{"sample_id": "1", "task_id": "a/1", "code": "x", "task_code": RELU},
                                        {"sample_id": "2", "task_id": "a/2", "code": "y"}])
    r = run("decontaminate", src, "--against", tmp_path / "bench", "-o", tmp_path / "out.jsonl")
    assert r.exit_code == 0, r.output
    assert "1 of 2 rows have no task program" in r.output

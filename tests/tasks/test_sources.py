"""Task sources: KernelBench folders, JSONL/Parquet tables, single files, builtin."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from kernelmill.tasks import TaskSourceError, check_task_code, load_tasks, parse_task_path

GOOD = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Model(nn.Module):
        def forward(self, x):
            return torch.relu(x)


    n = 1024
    SIZE_PROFILES = {"small": {"n": 8}}


    def get_inputs():
        return [torch.randn(n)]


    def get_init_inputs():
        return []
    """)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_parse_task_path():
    assert parse_task_path(Path("level1/19_ReLU.py")) == ("level1/19_ReLU", "ReLU", 1)
    assert parse_task_path(Path("level_3/extra/7-Mini_GPT.py")) == ("level_3/extra/7-Mini_GPT", "Mini_GPT", 3)
    assert parse_task_path(Path("misc/plain.py")) == ("misc/plain", "plain", None)


def test_folder_with_level_dirs(tmp_path):
    write(tmp_path / "level1" / "19_ReLU.py", GOOD)
    write(tmp_path / "level2" / "sub" / "3_Gemm_ReLU.py", GOOD)
    write(tmp_path / "level2" / "_helper.py", "x = 1\n")  # private files are not tasks
    write(tmp_path / "other" / "4_Tagged.py", "# kernelmill: level=3 op_type=network\n" + GOOD)
    ts = load_tasks(tmp_path)
    assert ts.problems == []
    by_id = ts.by_id()
    assert sorted(by_id) == ["level1/19_ReLU", "level2/sub/3_Gemm_ReLU", "other/4_Tagged"]
    relu = by_id["level1/19_ReLU"]
    assert (relu.name, relu.level, relu.op_type) == ("ReLU", 1, None)
    assert relu.sizes == {"small": {"n": 8}}
    assert relu.code == GOOD and relu.source == str(tmp_path)
    assert by_id["level2/sub/3_Gemm_ReLU"].level == 2
    tagged = by_id["other/4_Tagged"]
    assert (tagged.name, tagged.level, tagged.op_type) == ("Tagged", 3, "network")


def test_bad_files_are_reported_by_path_and_skipped(tmp_path):
    write(tmp_path / "level1" / "1_Good.py", GOOD)
    no_model = write(tmp_path / "level1" / "2_NoModel.py", "def get_inputs():\n    return []\n")
    broken = write(tmp_path / "level1" / "3_Broken.py", "import torch\n\nclass Model(:\n    pass\n")
    dynamic = write(tmp_path / "level1" / "4_Dynamic.py", GOOD.replace('{"small": {"n": 8}}', "dict(small={})"))
    ts = load_tasks(tmp_path)
    assert [t.task_id for t in ts] == ["level1/1_Good"]
    msgs = {p.path: p.message for p in ts.problems}
    assert set(msgs) == {str(no_model), str(broken), str(dynamic)}
    assert "missing Model" in msgs[str(no_model)]
    assert f"{broken}:3:" in msgs[str(broken)] and "syntax error" in msgs[str(broken)]
    assert "SIZE_PROFILES must be a literal dict" in msgs[str(dynamic)]
    assert f"{dynamic}:" in msgs[str(dynamic)]


def test_jsonl_table(tmp_path):
    path = tmp_path / "tasks.jsonl"
    rows = [
        {"task_id": "level1/5_Tanh", "code": GOOD},
        {"task_id": "custom", "code": GOOD, "name": "Custom", "level": 2, "op_type": "fusion"},
        {"task_id": "nocode"},
        {"task_id": "level1/5_Tanh", "code": GOOD},  # duplicate
        {"task_id": "bad", "code": "def get_inputs(): return []\n"},
    ]
    lines = [json.dumps(r) for r in rows]
    lines.insert(2, "{not json")
    path.write_text("\n".join(lines) + "\n")
    ts = load_tasks(path)
    by_id = ts.by_id()
    assert sorted(by_id) == ["custom", "level1/5_Tanh"]
    tanh = by_id["level1/5_Tanh"]
    assert (tanh.name, tanh.level, tanh.sizes) == ("Tanh", 1, {"small": {"n": 8}})
    custom = by_id["custom"]
    assert (custom.name, custom.level, custom.op_type) == ("Custom", 2, "fusion")
    lines_reported = sorted(p.line for p in ts.problems)
    assert lines_reported == [3, 4, 5, 6]
    by_line = {p.line: p.message for p in ts.problems}
    assert "malformed JSON" in by_line[3]
    assert "lacks code" in by_line[4]
    assert "duplicate" in by_line[5]
    assert "missing Model" in by_line[6]


def test_parquet_table(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    table = pa.table({"task_id": ["level2/1_A", "level3/2_B", "x"],
                      "code": [GOOD, GOOD, "class Model: pass\n"],
                      "op_type": ["fusion", None, None]})
    path = tmp_path / "tasks.parquet"
    pq.write_table(table, path)
    ts = load_tasks(path)
    by_id = ts.by_id()
    assert sorted(by_id) == ["level2/1_A", "level3/2_B"]
    assert (by_id["level2/1_A"].level, by_id["level2/1_A"].op_type, by_id["level2/1_A"].name) == (2, "fusion", "A")
    assert by_id["level3/2_B"].level == 3
    assert len(ts.problems) == 1 and ts.problems[0].line == 3 and "get_inputs" in ts.problems[0].message


def test_corrupt_parquet_raises_naming_the_file(tmp_path):
    path = write(tmp_path / "tasks.parquet", "this is not parquet")
    with pytest.raises(TaskSourceError, match="tasks.parquet"):
        load_tasks(path)


def test_single_file_and_bad_sources(tmp_path):
    one = write(tmp_path / "7_Single.py", GOOD)
    ts = load_tasks(one)
    assert [t.task_id for t in ts] == ["7_Single"]
    with pytest.raises(TaskSourceError, match="not found"):
        load_tasks(tmp_path / "missing")
    with pytest.raises(TaskSourceError, match="unknown task source format"):
        load_tasks(write(tmp_path / "tasks.csv", "task_id,code\n"))


def test_check_task_code_reports_line_and_column():
    with pytest.raises(ValueError, match=r"where\.py:2:\d+: syntax error"):
        check_task_code("x = 1\ny = (\n", "where.py")
    assert check_task_code(GOOD, "ok.py") == {"sizes": {"small": {"n": 8}}}


def test_builtin_source_loads():
    ts = load_tasks("builtin")
    assert ts.problems == [] and len(ts) >= 40

"""Exports: the FORMATS.md shapes, KTO labels, GRPO one row per task, CSV splits, card."""

from __future__ import annotations

import csv
import json

import pyarrow.parquet as pq
import pytest

from kernelmill.curate import ExportConfig, build_rows, fim_pairs, write_export, write_meta

TASK = "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x.relu()\n"
TRITON = '''import triton
import triton.language as tl

BLOCK = 128

@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    """y = max(x, 0)"""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.maximum(tl.load(x_ptr + offs, mask=mask), 0), mask=mask)

class ModelNew:
    pass
'''


def rows():
    return [
        {"sample_id": "a", "task_id": "t1", "language": "cuda", "code": "cuda a", "reasoning": "think a",
         "correct": True, "speedup": 2.0, "source_part": "a", "task_code": TASK},
        {"sample_id": "b", "task_id": "t1", "language": "cuda", "code": "cuda b", "reasoning": None,
         "correct": True, "speedup": 0.5, "source_part": "b", "task_code": TASK},
        {"sample_id": "c", "task_id": "t2", "language": "triton", "code": TRITON, "reasoning": "r",
         "correct": False, "speedup": None, "task_code": TASK},
        {"sample_id": "d", "task_id": "t3", "language": "cuda", "code": "x"},  # no task code
    ]


def test_sft_messages_shape():
    res = build_rows(rows(), ExportConfig("sft-messages"))
    assert [r["sample_id"] for r in res.rows] == ["a", "b"]
    m = res.rows[0]["messages"]
    assert [x["role"] for x in m] == ["system", "user", "assistant"]
    assert TASK.strip() in m[1]["content"]
    assert m[2]["content"] == "<think>\nthink a\n</think>\n\n```python\ncuda a\n```"
    assert res.rows[1]["messages"][2]["content"].startswith("```python")  # no reasoning, no think block
    assert res.rows[0]["source_part"] == "a"
    reasons = {e["id"]: e["reason"] for e in res.excluded}
    assert "incorrect" in reasons["c"] and "task code" in reasons["d"]
    assert res.counts["without_reasoning"] == 1


def test_kto_label_rule():
    res = build_rows(rows(), ExportConfig("kto", min_speedup=1.0))
    labels = {r["sample_id"]: r["label"] for r in res.rows}
    assert labels == {"a": True, "b": False, "c": False}
    assert res.rows[0]["completion"][0]["role"] == "assistant"
    res = build_rows(rows(), ExportConfig("kto", min_speedup=0))
    assert {r["sample_id"]: r["label"] for r in res.rows}["b"] is True


def test_grpo_one_row_per_task_with_task_code():
    res = build_rows(rows(), ExportConfig("grpo"))
    assert [(r["task_id"], r["language"]) for r in res.rows] == [("t1", "cuda"), ("t2", "triton")]
    assert res.rows[0]["task_code"] == TASK and res.rows[0]["prompt"][-1]["role"] == "user"


def test_custom_prompt_renderer():
    res = build_rows(rows()[:1], ExportConfig("sft-prompt-completion"),
                     render_prompt=lambda row: [{"role": "user", "content": f"{row['language']}:{len(row['task_code'])}"}])
    assert res.rows[0]["prompt"] == [{"role": "user", "content": f"cuda:{len(TASK)}"}]


def test_fim_cuts_at_body():
    [(name, prompt, completion)] = fim_pairs(TRITON)
    assert name == "relu_kernel"
    assert prompt.rstrip().endswith('"""y = max(x, 0)"""') and "@triton.jit" in prompt
    assert completion.lstrip().startswith("pid = tl.program_id(0)") and "class ModelNew" not in completion
    assert prompt + completion in TRITON


def test_translate_pairs():
    rs = rows()
    rs.append({"sample_id": "e", "task_id": "t1", "language": "triton", "code": TRITON, "correct": True, "speedup": 1.1})
    res = build_rows(rs, ExportConfig("translate-csv"))
    assert len(res.rows) == 1 and "cuda a" in res.rows[0]["prompt"] and res.rows[0]["completion"] == TRITON


@pytest.mark.parametrize("fmt", ["sft-messages", "kto", "grpo", "fim-csv"])
def test_files_and_card(tmp_path, fmt):
    src = tmp_path / "curated.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows()))
    write_meta(src, "curate", ["samples.jsonl", "verdicts.jsonl"], {"recipe": "concur", "seed": 0}, {"a": 1})
    cfg = ExportConfig(fmt)
    res = build_rows(rows(), cfg)
    out = tmp_path / "out"
    files = write_export(res, cfg, out, str(src))
    table = pq.read_table(out / "train.parquet")
    assert table.num_rows == len(res.rows) > 0
    if fmt == "fim-csv":
        with open(out / "train.csv", newline="") as fh:
            got = list(csv.DictReader(fh))
        assert list(got[0]) == ["prompt", "completion"] and got[0]["completion"] == res.rows[0]["completion"]
    else:
        lines = (out / "train.jsonl").read_text().splitlines()
        assert [json.loads(x) for x in lines] == res.rows
    card = (out / "README.md").read_text()
    assert "recipe=concur" in card and "samples.jsonl" in card
    assert "| rows |" in card or "| pairs |" in card
    excluded = [json.loads(x) for x in (out / "excluded.jsonl").read_text().splitlines()]
    assert len(excluded) == len(res.excluded)
    assert "README.md" in files

"""Exports in the wrong shape fail early, naming the expected columns and the line."""

from __future__ import annotations

import json

import pytest

from kernelmill.train import DatasetFormatError, load_rows


def write(tmp_path, rows, name="d.jsonl"):
    p = tmp_path / name
    p.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return p


def test_sft_wrong_columns_names_expected(tmp_path):
    p = write(tmp_path, [{"text": "hello"}])
    with pytest.raises(DatasetFormatError, match=r"d\.jsonl:1: SFT data needs columns messages .*found: text"):
        load_rows("sft", p)


def test_sft_without_assistant_turn(tmp_path):
    p = write(tmp_path, [{"messages": [{"role": "user", "content": "hi"}]}])
    with pytest.raises(DatasetFormatError, match="no assistant turn"):
        load_rows("sft", p)


def test_prompt_completion_rows_become_messages(tmp_path):
    rows = load_rows("sft", write(tmp_path, [{"prompt": "def f(", "completion": "x): pass"}]))
    assert [m["role"] for m in rows[0]["messages"]] == ["user", "assistant"]


def test_malformed_line_is_an_error_with_line(tmp_path):
    good = {"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]}
    p = write(tmp_path, [good, "{not json", good])
    with pytest.raises(DatasetFormatError, match=r"d\.jsonl:2: malformed"):
        load_rows("sft", p)


def test_kto_label_and_columns(tmp_path):
    row = {"prompt": [{"role": "user", "content": "a"}], "completion": [{"role": "assistant", "content": "b"}]}
    with pytest.raises(DatasetFormatError, match="KTO data needs columns .*missing label"):
        load_rows("kto", write(tmp_path, [row]))
    with pytest.raises(DatasetFormatError, match="'label' must be true or false"):
        load_rows("kto", write(tmp_path, [{**row, "label": "yes"}]))


def test_grpo_needs_task_code_without_task_source(tmp_path):
    row = {"prompt": [{"role": "user", "content": "a"}], "task_id": "t", "language": "torch"}
    with pytest.raises(DatasetFormatError, match="missing task_code"):
        load_rows("grpo", write(tmp_path, [row]), need_task_code=True)
    assert load_rows("grpo", write(tmp_path, [row]))[0]["task_id"] == "t"


def test_bad_role(tmp_path):
    p = write(tmp_path, [{"messages": [{"role": "human", "content": "a"}, {"role": "assistant", "content": "b"}]}])
    with pytest.raises(DatasetFormatError, match="unknown role 'human'"):
        load_rows("sft", p)

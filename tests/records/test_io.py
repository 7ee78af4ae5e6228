"""Tolerant JSONL io: atomic appends, truncated tails, malformed lines."""

from __future__ import annotations

import warnings

import pytest

from kernelmill.records import (ReadProblem, Sample, Verdict, append_jsonl, read_jsonl, write_jsonl)


def s(i):
    return Sample(sample_id=f"s{i}", task_id="t", language="torch", code=f"x = {i}")


def test_roundtrip_and_unknown_keys_go_to_meta(tmp_path):
    p = tmp_path / "a.jsonl"
    write_jsonl(p, [s(1), s(2)])
    append_jsonl(p, [s(3)])
    with open(p, "a") as fh:
        fh.write('{"sample_id": "s4", "task_id": "t", "language": "cuda", "code": "y", "score": 3}\n')
    got = read_jsonl(p, Sample, [])
    assert [x.sample_id for x in got] == ["s1", "s2", "s3", "s4"]
    assert got[3].meta == {"score": 3}


def test_truncated_last_line_is_reported_and_rest_kept(tmp_path):
    p = tmp_path / "a.jsonl"
    write_jsonl(p, [s(1), s(2)])
    with open(p, "a") as fh:
        fh.write('{"sample_id": "s3", "task_')
    problems: list[ReadProblem] = []
    got = read_jsonl(p, Sample, problems)
    assert [x.sample_id for x in got] == ["s1", "s2"]
    assert len(problems) == 1 and problems[0].line == 3 and "truncated" in problems[0].message


def test_append_after_truncation_cuts_the_fragment(tmp_path):
    p = tmp_path / "a.jsonl"
    write_jsonl(p, [s(1)])
    with open(p, "a") as fh:
        fh.write('{"sample_id": "s2", "ta')
    with pytest.warns(UserWarning, match="truncated"):
        append_jsonl(p, [s(3)])
    problems: list[ReadProblem] = []
    assert [x.sample_id for x in read_jsonl(p, Sample, problems)] == ["s1", "s3"]
    assert problems == []


def test_malformed_middle_line_reported_by_number(tmp_path):
    p = tmp_path / "a.jsonl"
    p.write_text('{"sample_id": "s1", "task_id": "t", "language": "torch", "code": "x"}\nnot json\n'
                 '[1, 2]\n{"sample_id": "s4", "task_id": "t"}\n'
                 '{"sample_id": "s5", "task_id": "t", "language": "torch", "code": "x"}\n')
    problems: list[ReadProblem] = []
    got = read_jsonl(p, Sample, problems)
    assert [x.sample_id for x in got] == ["s1", "s5"]
    assert [pr.line for pr in problems] == [2, 3, 4]
    assert "missing language, code" in problems[2].message
    assert "malformed" in problems[0].message


def test_problems_warn_when_no_list_given(tmp_path):
    p = tmp_path / "a.jsonl"
    p.write_text("garbage\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert read_jsonl(p, Verdict) == []
    assert any("a.jsonl:1" in str(w.message) for w in caught)


def test_a_gzip_compressed_jsonl_reads_as_the_plain_one(tmp_path):
    """Raw files of earlier sessions under docs/results are kept gzip-compressed (`.gz`)."""
    import gzip

    from kernelmill.records import iter_jsonl_numbered

    text = b'{"a": 1}\n\n{"a": 2}\n'
    (tmp_path / "v.jsonl").write_bytes(text)
    (tmp_path / "v.jsonl.gz").write_bytes(gzip.compress(text))
    plain = list(iter_jsonl_numbered(tmp_path / "v.jsonl"))
    assert plain == list(iter_jsonl_numbered(tmp_path / "v.jsonl.gz")) == [(1, {"a": 1}), (3, {"a": 2})]

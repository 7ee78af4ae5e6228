"""Normalisation, exact dedup, MinHash near-dup and the exclusion records."""

from __future__ import annotations

import pytest

from kernelmill.curate import DedupConfig, dedup, normalize_code, normalize_text, sha1_key
from kernelmill.curate.normalize import jaccard, shingle_hashes
from kernelmill.curate.synthetic import synthetic_kernels


def test_spec_normalisation():
    assert normalize_text("  a\r\nb \t\t c\n\n\n\nd  ") == "a\nb c\n\nd"


def test_code_normalisation_drops_comments_keeps_preprocessor():
    code = '#include <cuda.h>\n# a python comment\nx = 1  # trailing\n/* block\n comment */ int y;  // tail\n\n\n  z=2'
    assert normalize_code(code) == "#include <cuda.h>\nx = 1\nint y;\nz=2"


def test_sha1_key_is_spec_rule():
    import hashlib

    assert sha1_key("p", "c") == hashlib.sha1(b"p|||c").hexdigest()


def test_exact_dedup_reports_duplicate_of():
    rows = [{"sample_id": "a", "task_id": "t", "code": "int x = 1; // one"},
            {"sample_id": "b", "task_id": "t", "code": "int x = 1;   // another comment"},
            {"sample_id": "c", "task_id": "u", "code": "int x = 1;"},
            {"sample_id": "d", "task_id": "t", "code": "int x = 2;"}]
    res = dedup(rows, DedupConfig(method="exact"))
    assert [r["sample_id"] for r in res.kept] == ["a", "c", "d"]  # c is another task
    # the exclusion entry carries the dropped record itself
    assert res.excluded == [{"id": "b", "reason": "exact_duplicate", "duplicate_of": "a", "similarity": 1.0,
                             "record": rows[1]}]
    res = dedup(rows, DedupConfig(method="exact", scope="global"))
    assert [e["id"] for e in res.excluded] == ["b", "c"]
    # the text rule keeps comments, so a and b differ
    assert len(dedup(rows, DedupConfig(method="exact", normalization="text")).kept) == 4


def test_prompt_completion_key():
    rows = [{"id": "1", "prompt": "p\r\n", "completion": "c  d"}, {"id": "2", "prompt": "p", "completion": "c d"}]
    res = dedup(rows, DedupConfig(method="exact", normalization="text"))
    assert [e["id"] for e in res.excluded] == ["2"]


def test_bad_record_names_where():
    with pytest.raises(ValueError, match="in.jsonl: record 2"):
        dedup([{"code": "x"}, {"other": 1}], where="in.jsonl")


@pytest.fixture(scope="module")
def planted():
    return synthetic_kernels(600, dup_share=0.3, seed=5)


def test_minhash_finds_planted_near_duplicates(planted):
    records, truth = planted
    res = dedup(records, DedupConfig(method="minhash", threshold=0.8, scope="global", workers=2))
    dropped = {e["id"]: e for e in res.excluded}
    by_id = {r["id"]: r for r in records}
    assert all(e["record"] is by_id[e["id"]] for e in res.excluded)
    should = [p for p in truth if p.jaccard >= 0.8]
    should_not = [p for p in truth if p.jaccard < 0.75]
    assert should and should_not
    found = sum(1 for p in should if p.copy in dropped)
    assert found / len(should) >= 0.95
    # nothing below the threshold is dropped: every drop is verified exactly
    texts = {r["id"]: r["code"] for r in records}
    for e in res.excluded:
        a = shingle_hashes(normalize_code(texts[e["id"]]), 5)
        b = shingle_hashes(normalize_code(texts[e["duplicate_of"]]), 5)
        assert jaccard(a, b) >= 0.8
        assert e["duplicate_of"] not in dropped  # points at a kept record
    assert not any(p.copy in dropped for p in should_not)
    assert len(res.kept) + len(res.excluded) == len(records)


def test_minhash_is_deterministic_and_worker_independent(planted):
    records, _ = planted
    one = dedup(records[:300], DedupConfig(scope="global", workers=1))
    two = dedup(records[:300], DedupConfig(scope="global", workers=2))
    assert one.excluded == two.excluded


def test_config_errors():
    with pytest.raises(ValueError, match="threshold"):
        DedupConfig(threshold=1.5).check()
    with pytest.raises(ValueError, match="method"):
        DedupConfig(method="fuzzy").check()

"""Vectorised shingles / MinHash rows and the banded LSH pass, checked against
the per-text definitions and against datasketch's own MinHashLSH."""

from __future__ import annotations

import numpy as np
import pytest

from kernelmill.curate import DedupConfig, dedup, normalize_code, normalize_text
from kernelmill.curate.lsh import band_keys, band_params, greedy_pass, shared_keys
from kernelmill.curate.normalize import code_tokens, jaccard, shingle_hashes
from kernelmill.curate.shingles import minhash_rows, shingle_batch, token_hashes
from kernelmill.curate.synthetic import synthetic_kernels

TEXTS = ["x = a + b;  // add", "", "   ", "a", "a b c d", "f(x) + g(y) * h(z) - 1.5f;",
         "héllo wörld… naïve\u00a0x y z w", "a\x0bb", "__global__ void k(float* p) { p[0] = 1; }"]


@pytest.mark.parametrize("text", TEXTS)
def test_token_split_matches_code_tokens(text):
    h, off = token_hashes([text])
    toks = code_tokens(text)
    assert off[1] - off[0] == len(toks)
    seen: dict[str, int] = {}
    for tok, v in zip(toks, h.tolist()):
        assert seen.setdefault(tok, v) == v  # the same token always hashes alike
    assert len(set(h.tolist())) == len(set(toks))  # and different tokens differently


def test_shingle_batch_equals_one_text_at_a_time():
    sh, off = shingle_batch(TEXTS, 3)
    small = shingle_batch(TEXTS, 3, group_bytes=8)  # many groups, same answer
    assert np.array_equal(small[0], sh) and np.array_equal(small[1], off)
    for i, t in enumerate(TEXTS):
        one, _ = shingle_batch([t], 3)
        assert np.array_equal(sh[off[i]:off[i + 1]], one)
        n = len(code_tokens(t))
        assert len(one) == (0 if n == 0 else max(1, n - 2))  # short text: one shingle
    # shingles never span two texts: "a" + "b c" is not "a b c"
    assert not set(shingle_hashes("a b c", 3)) & set(shingle_batch(["a", "b c"], 3)[0].tolist())


def test_minhash_rows_are_affine32_minima():
    from datasketch import MinHash

    perms = MinHash(num_perm=64, seed=3).permutations
    a, b = perms.astype(np.uint32)
    sh, off = shingle_batch(TEXTS, 2)
    rows = minhash_rows(sh, off, perms, block=7)  # tiny blocks: several per call
    for i in range(len(TEXTS)):
        h = sh[off[i]:off[i + 1]]
        want = (h[:, None] * a + b).min(axis=0) if len(h) else np.full(64, 2**32 - 1, dtype=np.uint32)
        assert np.array_equal(rows[i], want)
    # the rows are datasketch MinHash values: its estimator reads them
    x = MinHash(num_perm=64, seed=3, hashvalues=rows[0], scheme="affine32")
    assert x.jaccard(MinHash(num_perm=64, seed=3, hashvalues=rows[0], scheme="affine32")) == 1.0


def test_whitespace_rules_unchanged():
    assert normalize_code("a \t b  \n \n\t c \n  ") == "a b\nc"
    assert normalize_code("x  // c\n\n\n   y /* z */  w") == "x\ny w"
    assert normalize_text(" a\t\t b   c\n\n\n\nd \n") == "a b c\n\nd"


@pytest.fixture(scope="module")
def planted_sigs():
    import sys

    dd = sys.modules["kernelmill.curate.dedup"]
    records, _ = synthetic_kernels(400, dup_share=0.3, seed=11)
    items = [("", r["code"]) for r in records]
    _, sigs = dd.fingerprints(items, DedupConfig(workers=1))
    return sigs


def test_banding_finds_the_candidates_datasketch_finds(planted_sigs):
    """Same bands as datasketch's MinHashLSH; the sequential query-then-insert
    pass gives every record exactly datasketch's candidate set."""
    from datasketch import MinHash, MinHashLSH

    sigs = planted_sigs
    b, r = band_params(0.8, 128, 0.99)
    lsh = MinHashLSH(threshold=0.8, num_perm=128, weights=(0.01, 0.99))
    assert (lsh.b, lsh.r) == (b, r)
    keys = band_keys(sigs, b, r, np.zeros(len(sigs), dtype=np.uint64))
    hot = shared_keys(keys)
    ours: dict[int, list[int]] = {}

    def keep_all(i, cands):  # record candidates, drop nothing: every record is inserted
        ours[i] = list(cands)
        return None

    assert greedy_pass(keys, hot, keep_all).all()
    theirs = {}
    for i, row in enumerate(sigs):
        m = MinHash(num_perm=128, hashvalues=row, scheme="affine32")
        found = sorted(lsh.query(m))
        if found:
            theirs[i] = found
        lsh.insert(i, m)
    assert theirs and ours == theirs


def test_near_dedup_respects_task_scope():
    records, _ = synthetic_kernels(30, dup_share=0.0, seed=2)
    twin = dict(records[0], id="twin", code=records[0]["code"].replace("v1 ", "w1 ", 1))
    rows = records + [dict(twin, task_id="other"), twin]
    by_task = dedup(rows, DedupConfig(threshold=0.8, workers=1))
    assert [e["id"] for e in by_task.excluded] == ["twin"]  # only the copy in the same task
    assert by_task.excluded[0]["duplicate_of"] == records[0]["id"]
    assert by_task.excluded[0]["reason"] == "near_duplicate" and by_task.excluded[0]["similarity"] < 1.0
    flat = dedup(rows, DedupConfig(threshold=0.8, scope="global", workers=1))
    assert [e["reason"] for e in flat.excluded] == ["exact_duplicate", "near_duplicate"]


def test_shingle_size_changes_similarity():
    a = normalize_code("float y = expf(x) + 1.0f; float z = y * 2.0f; out[i] = z;")
    b = a.replace("2.0f", "3.0f")
    sims = [jaccard(shingle_hashes(a, k), shingle_hashes(b, k)) for k in (1, 3, 5, 8)]
    assert sims == sorted(sims, reverse=True) and sims[0] > sims[-1]

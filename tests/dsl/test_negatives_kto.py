from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernelmill.chat import export_prompt
from kernelmill.dsl import get_dsl
from kernelmill.dsl.kto import PAPER_RATIO, balance, export_kto, parse_ratio
from kernelmill.dsl.negatives import (KINDS, TILELANG_INJECTIONS, as_samples, confirm, failed_attempts,
                                      inject_trace, make_negatives, negatives_pipeline)
from kernelmill.records import Sample, Verdict
from kernelmill.tasks import load_tasks

ADD_TL = (Path(__file__).parents[2] / "src/kernelmill/chat/templates/examples/add_tilelang.py").read_text()
GEMM_TL = """
@T.prim_func
def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        A_s = T.alloc_shared((block_M, block_K), dtype)
        C_l = T.alloc_fragment((block_M, block_N), accum)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
            T.copy(A[by * block_M, k * block_K], A_s)
        T.copy(C_l, C[by * block_M, bx * block_N])
"""


def test_every_kind_has_tilelang_rules_that_change_real_kernels():
    assert {i.kind for i in TILELANG_INJECTIONS} == set(KINDS)
    todo, dropped = make_negatives([{"sample_id": "s1", "task_id": "t", "code": ADD_TL, "trace": "a\n\nb"},
                                    {"sample_id": "s2", "task_id": "g", "code": GEMM_TL, "trace": "x"}],
                                   TILELANG_INJECTIONS)
    assert len(todo) + len(dropped) == 2 * len(TILELANG_INJECTIONS)
    assert {n.kind for n in todo} == set(KINDS)
    swap = next(n for n in todo if n.rule == "swapped_tile_offsets")
    assert "T.copy(A[k * block_K, by * block_M], A_s)" in swap.code
    copy_back = next(n for n in todo if n.rule == "dropped_copy_back")
    assert "T.copy(C_l, C[" not in copy_back.code and "T.copy(A[" in copy_back.code
    assert all(n.code != ADD_TL for n in todo)
    assert {(n.source_sample_id, n.rule) for n in dropped} >= {("s1", "swapped_tile_offsets"),
                                                              ("s1", "dropped_copy_back")}
    assert all(n.reason == "rule does not apply" for n in dropped)
    # the flawed claim is a step of the trace, before its last paragraph
    assert inject_trace("a\n\nb", "WRONG") == "a\n\nWRONG\n\nb"


def test_confirm_keeps_only_verifier_confirmed_failures_and_counts_the_rest():
    todo, dropped = make_negatives([{"sample_id": "s1", "task_id": "t", "code": ADD_TL, "trace": "r"}],
                                   TILELANG_INJECTIONS)
    statuses = ["incorrect", "ok", "compile_error", "timeout", "runtime_error"]
    verdicts = [Verdict(n.negative_id, n.task_id, st) for n, st in zip(todo, statuses)]
    rep = confirm(todo, verdicts, dropped)
    c = rep.counts()
    assert c["kept"] == 3
    assert c["dropped"] == len(dropped) + 2  # ok and timeout dropped; the rest not verified
    assert c["dropped_by_reason"]["rule does not apply"] == len(dropped)
    assert any(r.startswith("verifier: ok") for r in c["dropped_by_reason"])
    assert sum(k["kept"] + k["dropped"] for k in c["by_kind"].values()) == len(todo) + len(dropped)
    samples = as_samples(todo, "tilelang")
    assert samples[0].language == "tilelang" and samples[0].meta["negative_kind"] in KINDS


def test_injected_torch_negatives_are_confirmed_by_the_real_verifier(tmp_path):
    verify_mod = pytest.importorskip("kernelmill.verify")
    cfg = verify_mod.VerifyConfig(device="cpu")
    cfg.time = False
    task = load_tasks("builtin").by_id()["level1/01_ReLU"]
    right = ("import torch\nimport torch.nn as nn\n\nclass ModelNew(nn.Module):\n"
             "    def forward(self, x):\n        return x.clamp_min(0)\n")
    spec = get_dsl("torch")
    rep = negatives_pipeline(
        [{"sample_id": "s-relu", "task_id": task.task_id, "code": right, "trace": "Step 1.\n\nStep 2."}],
        spec.injections, [task], spec.language,
        lambda ts, ss: verify_mod.verify_samples(ts, ss, cfg, store=str(tmp_path / "s.sqlite")))
    kept = {n.rule: n.status for n in rep.kept}
    dropped = {n.rule: n.reason for n in rep.dropped}
    # rolled input and half batch compute wrong results; zeros are wrong for ReLU of randn
    assert kept.get("shifted_read") == "incorrect" and kept.get("half_batch") in ("incorrect", "runtime_error")
    assert kept.get("zeroed_result") == "incorrect"
    # fp16 round-trip of a ReLU input stays within fp32 tolerance? either way it is accounted for
    assert set(kept) | set(dropped) == {i.name for i in spec.injections}
    assert rep.counts()["kept"] + rep.counts()["dropped"] == len(spec.injections)


def test_failed_attempts_are_negatives():
    s = [Sample("a", "t", "tilelang", "code a"), Sample("b", "t", "tilelang", "code b"), Sample("c", "t", "tilelang", "")]
    v = [Verdict("a", "t", "compile_error"), Verdict("b", "t", "ok"), Verdict("c", "t", "compile_error")]
    got = failed_attempts(s, v)
    assert [n.source_sample_id for n in got] == ["a"] and got[0].kind == "failed_attempt"


def test_ratio_balancing():
    assert parse_ratio("3:8") == PAPER_RATIO
    with pytest.raises(ValueError):
        parse_ratio("3-8")
    assert balance(30, 200, (3, 8)) == (30, 80)
    assert balance(30, 40, (3, 8)) == (15, 40)
    assert balance(3, 8, (3, 8)) == (3, 8)
    assert balance(0, 5, (3, 8)) == (0, 5)


def test_kto_export_rows_use_the_chat_format_and_ratio(tmp_path):
    pytest.importorskip("pyarrow")
    code = "import torch\nclass Model: pass\n"
    pos = [{"task_id": f"t{i}", "task_code": code, "code": f"# kernel {i}", "reasoning": f"why {i}",
            "sample_id": f"p{i}"} for i in range(6)]
    neg = [{"task_id": f"t{i % 6}", "task_code": code, "code": f"# broken {i}", "reasoning": f"wrong {i}",
            "sample_id": f"n{i}"} for i in range(30)]
    res = export_kto(pos, neg, "tilelang", tmp_path / "kto", ratio=(3, 8), seed=1)
    labels = [r["label"] for r in res.rows]
    assert labels.count(True) == 6 and labels.count(False) == 16
    assert res.counts["dropped_negatives"] == 14
    row = next(r for r in res.rows if r["label"])
    assert row["prompt"] == export_prompt({"task_id": row["task_id"], "task_code": code, "language": "tilelang"})
    assert row["completion"][0]["content"].startswith("<think>\nwhy ")
    lines = (tmp_path / "kto" / "train.jsonl").read_text().splitlines()
    assert len(lines) == 22 and json.loads(lines[0])["label"] in (True, False)
    assert res.balance_note and "outside the recommended" in res.balance_note
    again = export_kto(pos, neg, "tilelang", tmp_path / "kto2", ratio=(3, 8), seed=1)
    assert [r["sample_id"] for r in again.rows] == [r["sample_id"] for r in res.rows]

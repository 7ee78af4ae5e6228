"""Items 30 and 35 (issue 42): a task's library and launch policy against what ran."""

from __future__ import annotations

import types

import pytest

from kernelmill.records import Sample, Task
from kernelmill.verify import VerifyConfig, verify_samples
from kernelmill.verify.guards.policy import PolicyError, apply_policy, policy_findings, task_policy

PROV = {"kernels": [{"symbol": "sm90_xmma_gemm_f32f32_tf32f32", "share": 0.8, "origin": "cublas"},
                    {"symbol": "my_epilogue_kernel", "share": 0.2, "origin": "own"}],
        "launches_per_call": 3}


def test_a_task_declares_its_policy_and_a_wrong_declaration_is_named():
    assert task_policy(types.SimpleNamespace()) == {"forbid": [], "max_launches": None}
    mod = types.SimpleNamespace(FORBID_LIBRARIES=["cublas"], MAX_LAUNCHES_PER_CALL=1)
    assert task_policy(mod) == {"forbid": ["cublas"], "max_launches": 1}
    with pytest.raises(PolicyError, match="origins"):
        task_policy(types.SimpleNamespace(FORBID_LIBRARIES=["cuBLAS!"]))
    with pytest.raises(PolicyError, match="positive integer"):
        task_policy(types.SimpleNamespace(MAX_LAUNCHES_PER_CALL=0))


def test_what_ran_against_the_policy_flags_or_rejects():
    policy = {"forbid": ["cublas"], "max_launches": 1}
    found = dict(policy_findings(policy, PROV))
    assert "80% of its GPU time" in found["forbidden_library"] and "3 launches" in found["fake_fusion"]
    assert policy_findings({"forbid": ["cudnn"], "max_launches": 3}, PROV) == []
    assert policy_findings(policy, None) == []  # no provenance (a CPU run): nothing to decide
    ok = {"status": "ok", "speedup": 2.0, "flags": [], "message": "", "provenance": {"candidate": PROV}}
    flagged = dict(ok)
    apply_policy(flagged, policy, "flag")
    assert flagged["status"] == "ok" and flagged["speedup"] == 2.0
    assert set(flagged["flags"]) == {"forbidden_library", "fake_fusion"}
    rejected = dict(ok)
    apply_policy(rejected, policy, "reject")
    assert rejected["status"] == "rejected" and "speedup" not in rejected and "fake_fusion" in rejected["message"]


TASK = """import torch
import torch.nn as nn

FORBID_LIBRARIES = {forbid}


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(64)]


def get_init_inputs():
    return []
"""


def test_a_task_with_a_wrong_policy_is_the_tasks_error(tmp_path):
    good = Task(task_id="t/good", code=TASK.format(forbid='["cublas"]'), name="good", level=1)
    bad = Task(task_id="t/bad", code=TASK.format(forbid='["blas"]'), name="bad", level=1)
    code = TASK.format(forbid="[]").replace("class Model", "class ModelNew")
    cfg = VerifyConfig(device="cpu", trials=2, time=False, cache_dir=str(tmp_path / "c"), policy="reject")
    got = {v.sample_id: v for v in verify_samples({t.task_id: t for t in (good, bad)},
                                                  [Sample("g", "t/good", "torch", code), Sample("b", "t/bad", "torch", code)], cfg)}
    assert got["g"].status == "ok"  # a CPU run has no provenance: the policy decides nothing
    assert got["b"].status == "runtime_error" and "FORBID_LIBRARIES" in got["b"].message

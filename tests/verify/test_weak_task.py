"""verify says beside a verdict when the task's check also passes a candidate that computes
nothing (issue 45, target 4): KernelBench-style ReLU on non-negative inputs, where x.clone()
is "correct"; and stays quiet on a task whose check defends itself."""

from __future__ import annotations

import textwrap

import pytest

from kernelmill.records import Sample, Task
from kernelmill.verify import VerifyConfig, verify_samples
from kernelmill.verify.measure.correctness import CheckRule
from kernelmill.verify.measure.trivial import weak_by

WEAK_RELU = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def forward(self, x):
            return torch.relu(x)

    def get_inputs():
        return [torch.rand(64, 256)]  # all non-negative: relu(x) == x

    def get_init_inputs():
        return []
""")
CLONE = textwrap.dedent("""
    import torch.nn as nn

    class ModelNew(nn.Module):
        def forward(self, x):
            return x.clone()
""")


def test_weak_by_names_the_trivial_candidates_that_pass():
    import torch

    x = torch.rand(8, 16)
    assert weak_by([torch.relu(x)], [[x]], CheckRule()) == ["input_copy"]
    y = torch.randn(8, 16)
    assert weak_by([torch.relu(y)], [[y]], CheckRule()) == []
    assert "zeros" in weak_by([torch.zeros(4)], [[torch.randn(4)]], CheckRule())


@pytest.mark.parametrize("guards", ["standard", "off"])
def test_a_weak_task_is_said_beside_the_verdict(tmp_path, guards):
    weak = Task("t/weak_relu", WEAK_RELU, level=1)
    strong = Task("t/relu", WEAK_RELU.replace("torch.rand(64, 256)", "torch.randn(64, 256)"), level=1)
    samples = [Sample("clone", "t/weak_relu", "torch", CLONE),
               Sample("honest", "t/relu", "torch", CLONE.replace("x.clone()", "x.clamp_min(0)"))]
    cfg = VerifyConfig(device="cpu", trials=2, time=False, guards=guards, cache_dir=str(tmp_path / "c"))
    v = {x.sample_id: x for x in verify_samples({t.task_id: t for t in (weak, strong)}, samples, cfg)}
    assert v["clone"].status == "ok"  # KernelBench semantics: it is correct on these inputs
    assert "weak_task" in v["clone"].flags and "input copy" in v["clone"].message
    assert v["honest"].status == "ok" and "weak_task" not in v["honest"].flags

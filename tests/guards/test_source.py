"""The AST checks alone (no processes): each flag fires on its pattern and
stays quiet on honest code, including the builtin suite's correct candidates."""

from __future__ import annotations

import pytest

from kernelmill.tasks.builtin import builtin_samples
from kernelmill.verify.guards import FLAGS, Findings, check_source, decide, own_kernel_names

HEAD = "import torch\nimport torch.nn as nn\n"


@pytest.mark.parametrize("code,flag", [
    (HEAD + "from reference import Model\nclass ModelNew(Model):\n    pass\n", "calls_reference"),
    (HEAD + "class ModelNew(nn.Module):\n    def forward(self, x):\n        return Model()(x)\n", "calls_reference"),
    (HEAD + "torch.cuda.synchronize = lambda: None\n", "harness_patched"),
    (HEAD + "import time as t\nt.perf_counter = lambda: 0.0\n", "harness_patched"),
    (HEAD + "setattr(torch, 'allclose', lambda *a: True)\n", "harness_patched"),
    (HEAD + "torch.backends.cudnn.allow_tf32 = True\n", "precision_downgrade"),
    (HEAD + "torch.set_float32_matmul_precision('medium')\n", "precision_downgrade"),
    (HEAD + "import sys\ndef f():\n    return sys._getframe(2).f_locals\n", "harness_introspection"),
    (HEAD + "import gc\nobjs = gc.get_objects()\n", "harness_introspection"),
    (HEAD + "data = open('/proc/self/maps').read()\n", "harness_introspection"),
    (HEAD + "def forward(x):\n    try:\n        return ext.relu(x)\n    except RuntimeError:\n"
            "        return torch.relu(x)\n", "try_fallback"),
])
def test_pattern_is_flagged(code, flag):
    assert flag in {f.flag for f in check_source(code, "standard", "cuda")}


@pytest.mark.parametrize("code", [
    HEAD + "torch.backends.cudnn.benchmark = True\n",
    HEAD + "torch.backends.cuda.matmul.allow_tf32 = False\n",
    HEAD + "try:\n    import triton\nexcept ImportError:\n    triton = None\n",
    HEAD + "def forward(x):\n    try:\n        return ext.relu(x)\n    except RuntimeError as e:\n        raise ValueError(e)\n",
    HEAD + "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.w = nn.Parameter(torch.ones(3))\n",
])
def test_honest_patterns_are_not_flagged(code):
    assert check_source(code, "strict", "cuda") == []


def test_strict_adds_heuristics():
    code = HEAD + "import inspect\n"
    assert check_source(code, "standard") == []
    assert [f.flag for f in check_source(code, "strict")] == ["harness_introspection"]


def test_builtin_candidates_have_no_finding_even_strict():
    for s in builtin_samples():
        assert check_source(s.code, "strict", s.language) == [], s.sample_id


def test_own_kernel_names():
    src = HEAD + 'cuda = r"""\n__global__ void __launch_bounds__(256) my_kernel(float* x) {}\n"""\n' \
                 "import triton\n@triton.jit\ndef tri_kernel(x):\n    pass\n"
    assert own_kernel_names(src) == ["my_kernel", "tri_kernel"]


def test_decide_status_and_policy():
    f = Findings()
    f.add("torch_fallback", "no own call")
    base = {"status": "ok", "correct": True, "speedup": 2.0}
    assert decide(f, base)["status"] == "rejected"
    flagged = decide(f, base, "flag")
    assert flagged["status"] == "ok" and flagged["flags"] == ["torch_fallback"]
    assert decide(f, base, "allow") == {**base, "flags": []}
    g = Findings()
    g.add("nondeterministic", "second call differs")
    out = decide(g, base)
    assert out["status"] == "incorrect" and "speedup" not in out and "nondeterministic" in out["message"]
    with pytest.raises(KeyError):
        g.add("no_such_flag", "")


def test_every_flag_has_a_status_and_item():
    assert all(status in ("rejected", "incorrect") and 1 <= item <= 15 for status, item, _ in FLAGS.values())

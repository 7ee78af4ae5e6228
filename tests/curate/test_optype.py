"""Task type inference by tracing Model.forward (never by reading the source)."""

from __future__ import annotations

import pytest

from kernelmill.curate import canonical_op, classify, task_types, trace_ops
from kernelmill.records import Task

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"

SINGLE = HEAD + '''
class Model(nn.Module):
    def forward(self, A, B):
        # a comment naming relu, conv2d and softmax must not matter
        return torch.matmul(A.T, B.view(B.size(0), -1))
N = 8192
def get_inputs():
    return [torch.randn(N, N).cuda(), torch.randn(N, N, device="cuda")]
def get_init_inputs():
    return []
'''

FUSION = HEAD + '''
class Model(nn.Module):
    def __init__(self, c, o):
        super().__init__()
        self.conv = nn.Conv2d(c, o, 3)
        self.bias = nn.Parameter(torch.zeros(o, 1, 1))
    def forward(self, x):
        x = self.conv(x) + self.bias
        x = F.relu(x)
        x = x * 2.0
        x.add_(1.0)
        return x
def get_inputs():
    return [torch.randn(64, 3, 512, 512)]
def get_init_inputs():
    return [3, 16]
'''

NETWORK = HEAD + '''
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(*[m for _ in range(8) for m in (nn.Linear(32, 32), nn.ReLU())])
    def forward(self, x):
        return self.layers(x)
def get_inputs():
    return [torch.randn(4, 32)]
def get_init_inputs():
    return []
'''

# Needs real values (data-dependent Python control flow): meta fails, the small CPU profile runs.
DATA_DEPENDENT = HEAD + '''
SIZE_PROFILES = {"small": {"n": 16}}
n = 10**9
class Model(nn.Module):
    def forward(self, x):
        if x.sum().item() > -1e30:
            return torch.tanh(x)
        return x
def get_inputs():
    return [torch.randn(n)]
def get_init_inputs():
    return []
'''


def test_canonical_names():
    import torch

    assert canonical_op(torch.Tensor.__radd__) == "add"
    assert canonical_op(torch.Tensor.add_) == "add"
    assert canonical_op(torch.Tensor.__truediv__) == "div"
    assert canonical_op(torch.nn.functional.relu) == "relu"


def test_single_fusion_network():
    s = trace_ops(SINGLE)
    assert dict(s.calls) == {"matmul": 1} and s.device == "meta"
    assert classify(s) == "single"
    f = trace_ops(FUSION)
    assert dict(f.calls) == {"conv2d": 1, "add": 2, "relu": 1, "mul": 1}
    assert classify(f) == "fusion"
    n = trace_ops(NETWORK)
    assert n.calls == {"linear": 8, "relu": 8} and classify(n) == "network"
    assert classify(n, network_calls=20) == "fusion"


def test_falls_back_to_small_cpu_profile():
    from kernelmill.tasks import check_task_code

    sizes = check_task_code(DATA_DEPENDENT, "dd.py")["sizes"]
    t = trace_ops(DATA_DEPENDENT, sizes=sizes)
    assert t.device == "cpu" and t.calls["tanh"] == 1
    assert classify(t) == "fusion"  # sum + tanh: two distinct ops


def test_broken_program_is_unknown_with_reason():
    t = trace_ops(HEAD + "class Model(nn.Module):\n    def forward(self, x):\n        return undefined(x)\n"
                  "def get_inputs():\n    return [torch.randn(2)]\n")
    assert classify(t) is None and "undefined" in t.error


def test_metadata_wins_and_origin_is_recorded():
    types = task_types([Task("a", SINGLE, op_type="fusion"), Task("b", SINGLE), Task("c", FUSION)])
    assert (types["a"].op_type, types["a"].origin) == ("fusion", "metadata")
    assert (types["b"].op_type, types["b"].origin) == ("single", "traced")
    assert types["c"].op_type == "fusion" and types["c"].ops["conv2d"] == 1


@pytest.mark.parametrize("code", [SINGLE.replace("torch.matmul", "torch.mm")])
def test_same_text_different_op_still_single(code):
    assert classify(trace_ops(code)) == "single"

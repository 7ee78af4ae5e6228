"""A candidate gets its init arguments and inputs in the form the task's `get_init_inputs` and
`get_inputs` returned them, tuples kept tuples, as KernelBench passes them: cuda-l1 L1-69 builds
its weight from `kernel_size if isinstance(kernel_size, tuple) else (kernel_size, kernel_size)`,
and given the list [3, 5] in place of (3, 5) it failed to construct (session 26)."""

from __future__ import annotations

import json

import torch

from kernelmill.records import Sample, Task
from kernelmill.verify import VerifyConfig, verify_samples
from kernelmill.verify.measure.tree import map_tensors
from kernelmill.verify.process import cuda_ipc
from kernelmill.verify.process.loading import inputs_to_cpu, to_cpu

TASK = """import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels, kernel_size, scale):
        super().__init__()
        self.kernel_size, self.scale = kernel_size, scale

    def forward(self, x, shape):
        return x.reshape(shape) * self.scale[0] + self.kernel_size[1]


def get_inputs():
    return [torch.randn(4, 6), (6, 4)]


def get_init_inputs():
    return [3, (3, 5), (2.0, [1.0])]
"""

# as the LLM wrote it: anything but a tuple is taken for one number
CAND = """import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, channels, kernel_size, scale):
        super().__init__()
        self.kernel_size = kernel_size if isinstance(kernel_size, tuple) else (kernel_size, kernel_size)
        self.weight = nn.Parameter(torch.empty(channels, *self.kernel_size))
        assert isinstance(scale, tuple) and isinstance(scale[1], list)
        self.scale = scale

    def forward(self, x, shape):
        assert isinstance(shape, tuple), type(shape)
        return x.reshape(shape) * self.scale[0] + self.kernel_size[1]
"""


def test_a_candidate_gets_tuples_where_the_task_gave_tuples(tmp_path):
    task = Task(task_id="t/forms", code=TASK, name="forms", level=1)
    cfg = VerifyConfig(device="cpu", trials=2, time=False, guards="standard", cache_dir=str(tmp_path / "c"))
    (v,) = verify_samples({task.task_id: task}, [Sample("s", task.task_id, "torch", CAND)], cfg)
    assert v.status == "ok", v.message


def test_the_exchanges_keep_lists_and_tuples_apart():
    args = [torch.ones(2), (3, 5), [(1, torch.zeros(1))], {"k": (1, 2)}]
    kept = inputs_to_cpu(args)
    assert isinstance(kept[1], tuple) and isinstance(kept[2], list) and isinstance(kept[2][0], tuple)
    assert to_cpu(args)[1] == [3, 5]  # outputs still cross as lists, as before
    from collections import namedtuple

    pair = namedtuple("pair", "a b")(torch.ones(1), 2)  # a namedtuple arrives a plain tuple
    assert type(map_tensors(pair, lambda t: t, plain=True)) is tuple
    assert type(map_tensors(pair, lambda t: t)) is type(pair)  # the default keeps its type
    # CUDA IPC's skeleton is JSON: a tuple is marked, and comes back a tuple
    skeleton, leaves, tensors, total = cuda_ipc.layout({"init": [3, (3, 5)], "trials": [[torch.ones(3), (6, 4)]]})
    buf = torch.zeros(max(total, 1), dtype=torch.uint8)
    cuda_ipc.pack_into(buf, leaves, tensors)
    back = cuda_ipc.unpack(json.loads(json.dumps({"tree": skeleton, "leaves": leaves})), buf, "cpu")
    assert back["init"] == [3, (3, 5)] and isinstance(back["trials"][0][1], tuple)
    assert torch.equal(back["trials"][0][0], torch.ones(3))

"""Classes 32 and 33 (issue 42): structure shortcuts, kernels right only on the usual draws,
caught by `--guards strict`'s structured draws (measure/inputs.STRUCTURED); with an honest
control of each task. Run by tests/verify/test_oracle.py and benchmarks/guards_catch.py.

HOSTILE_STRUCTURE: name -> (task, language, code, flags or None: not ok is the catch); a
name's prefix `sN_` is its class. CONTROLS: name -> (task, language, code), each must pass."""

from __future__ import annotations

from kernelmill.records import Task

SOFTMAX = """import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(16, 300)]


def get_init_inputs():
    return []
"""
NO_MAX = """import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        e = torch.exp(x)
        return e / e.sum(-1, keepdim=True)
"""
SHIFTED = NO_MAX.replace("torch.exp(x)", "torch.exp(x - x.amax(-1, keepdim=True))")

ARGMAX = """import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.argmax(x, dim=-1)


def get_inputs():
    return [torch.randn(32, 64)]


def get_init_inputs():
    return []
"""
# a parallel max-reduction that keeps the last index it saw: right whenever the maximum
# is unique (every usual draw), wrong on ties (item 32/33)
LAST_MAX = """import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        n = x.shape[-1]
        return n - 1 - torch.argmax(torch.flip(x, dims=[-1]), dim=-1)
"""
FIRST_MAX = """import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        m = x.amax(-1, keepdim=True)
        idx = torch.arange(x.shape[-1], device=x.device).expand_as(x)
        return torch.where(x == m, idx, x.shape[-1]).amin(-1)
"""


VAR = """import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.var(-1, unbiased=False)


def get_inputs():
    return [torch.randn(16, 4096)]


def get_init_inputs():
    return []
"""
ONE_PASS = """import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return (x * x).mean(-1) - x.mean(-1) ** 2
"""
SHIFTED_PASS = """import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        d = x - x[..., :1]
        return (d * d).mean(-1) - d.mean(-1) ** 2
"""


SOFTMAX_TASK = Task(task_id="t/softmax", code=SOFTMAX, name="softmax", level=1)
ARGMAX_TASK = Task(task_id="t/argmax", code=ARGMAX, name="argmax", level=1)
VAR_TASK = Task(task_id="t/var", code=VAR, name="var", level=1)

HOSTILE_STRUCTURE = {
    # assumes the usual range: exp overflows on the wide-range draw
    "s32_exp_without_max_shift": (SOFTMAX_TASK, "torch", NO_MAX, None),
    # assumes distinct values: the ties draw repeats the row maximum
    "s32_argmax_last_of_ties": (ARGMAX_TASK, "torch", LAST_MAX, None),
    # assumes data centred near 0: the large-offset draw cancels the one-pass formula
    "s32_one_pass_variance": (VAR_TASK, "torch", ONE_PASS, None),
}
CONTROLS = {
    "softmax_max_shift": (SOFTMAX_TASK, "torch", SHIFTED),
    "argmax_first_of_ties": (ARGMAX_TASK, "torch", FIRST_MAX),
    "variance_shifted_one_pass": (VAR_TASK, "torch", SHIFTED_PASS),
}

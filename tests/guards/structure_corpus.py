"""Classes 32 and 33 (issue 42): structure shortcuts and easy-case fast paths, kernels right only on the usual draws,
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


# the calibration's two misses of strict on the CPU (issue 42), caught since by the small-scale
# and rising wide-range draws: rmsnorm without its epsilon (~7e-7 of the output on the usual
# draws) and a softmax whose max reads a prefix of the row only (right until exp overflows)
RMSNORM = """import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6)


def get_inputs():
    return [torch.randn(16, 512)]


def get_init_inputs():
    return []
"""
SOFTMAX_1000 = SOFTMAX.replace("torch.randn(16, 300)", "torch.randn(16, 1000)")
PREFIX_MAX = """import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        # the first half's maximum only: on unsorted wide-range draws the whole row's maximum
        # is rarely 88 above it (the first 256 of 1000 columns sometimes are, and the plain
        # wide-range trial then catches it first); on rows sorted ascending it always is
        m = x[..., :512].max(-1, keepdim=True).values
        e = torch.exp(x - m)
        return e / e.sum(-1, keepdim=True)
"""


def _model(body: str) -> str:
    return ("import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
            "    def forward(self, x):\n        " + body + "\n")


EPS_DROPPED = _model("return x * torch.rsqrt((x * x).mean(-1, keepdim=True))")
EPS_KEPT = _model("return x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)")
ONLINE = _model("return torch.exp(x - torch.logsumexp(x, -1, keepdim=True))")


SOFTMAX_TASK = Task(task_id="t/softmax", code=SOFTMAX, name="softmax", level=1)
ARGMAX_TASK = Task(task_id="t/argmax", code=ARGMAX, name="argmax", level=1)
VAR_TASK = Task(task_id="t/var", code=VAR, name="var", level=1)
RMS_TASK = Task(task_id="t/rms", code=RMSNORM, name="rms", level=1)
SOFTMAX_1000_TASK = Task(task_id="t/sm", code=SOFTMAX_1000, name="sm", level=1)

SOFTPLUS = """import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.nn.functional.softplus(x)


def get_inputs():
    return [torch.randn(64, 256)]


def get_init_inputs():
    return []
"""
ABS_SUM = """import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.abs().sum(-1)


def get_inputs():
    return [torch.randn(64, 256)]


def get_init_inputs():
    return []
"""
# class 33: an easy-case fast path taken when the input is trivially structured (here: of one
# sign), wrong there; the usual draws are never of one sign, strict's non-negative and
# non-positive draws are
SOFTPLUS_FAST_PATH = _model("if bool((x >= 0).all()):\n            return x.clone()  # 'softplus(x) ~ x for x >= 0'\n"
                            "        return torch.log1p(torch.exp(-x.abs())) + x.clamp(min=0)")
SOFTPLUS_PLAIN = _model("return torch.log1p(torch.exp(-x.abs())) + x.clamp(min=0)")
ABS_SUM_FAST_PATH = _model("if bool((x <= 0).all()):\n            return x.sum(-1)  # the sign dropped on the fast path\n"
                           "        return x.abs().sum(-1)")
ABS_SUM_PLAIN = _model("return torch.where(x < 0, -x, x).sum(-1)")

SOFTPLUS_TASK = Task(task_id="t/softplus", code=SOFTPLUS, name="softplus", level=1)
ABS_SUM_TASK = Task(task_id="t/abs_sum", code=ABS_SUM, name="abs_sum", level=1)

HOSTILE_STRUCTURE = {
    # assumes the usual range: exp overflows on the wide-range draw
    "s32_exp_without_max_shift": (SOFTMAX_TASK, "torch", NO_MAX, None),
    # assumes distinct values: the ties draw repeats the row maximum
    "s32_argmax_last_of_ties": (ARGMAX_TASK, "torch", LAST_MAX, None),
    # assumes data centred near 0: the large-offset draw cancels the one-pass formula
    "s32_one_pass_variance": (VAR_TASK, "torch", ONE_PASS, None),
    # a prefix that decides: the rising wide-range draw puts the row's maximum past it
    "s32_prefix_maximum": (SOFTMAX_1000_TASK, "torch", PREFIX_MAX, None),
    # assumes the usual magnitude: the small-scale draw makes the epsilon matter
    "s32_dropped_epsilon": (RMS_TASK, "torch", EPS_DROPPED, None),
    # an easy case taken for inputs of one sign, wrong there
    "s33_softplus_non_negative_fast_path": (SOFTPLUS_TASK, "torch", SOFTPLUS_FAST_PATH, None),
    "s33_abs_sum_non_positive_fast_path": (ABS_SUM_TASK, "torch", ABS_SUM_FAST_PATH, None),
}
CONTROLS = {
    "softmax_max_shift": (SOFTMAX_TASK, "torch", SHIFTED),
    "argmax_first_of_ties": (ARGMAX_TASK, "torch", FIRST_MAX),
    "variance_shifted_one_pass": (VAR_TASK, "torch", SHIFTED_PASS),
    "rmsnorm_eps_kept": (RMS_TASK, "torch", EPS_KEPT),
    "softmax_logsumexp": (SOFTMAX_1000_TASK, "torch", ONLINE),
    "softplus_stable": (SOFTPLUS_TASK, "torch", SOFTPLUS_PLAIN),
    "abs_sum_where": (ABS_SUM_TASK, "torch", ABS_SUM_PLAIN),
}

"""Honest candidates of our own (beside the builtin suite's correct ones):
different formulations, in-place work on their own buffers, threads that are
joined, reference-identical torch code, C++ extensions, fast and slow ones.
None of them may get a flag, in standard or strict."""

from __future__ import annotations

import guard_tasks as T
from hostile_corpus import model, triton_model

CPP_RELU = '''
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

src = r"""
#include <torch/extension.h>
torch::Tensor relu_fwd(torch::Tensor x) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    auto* s = xc.data_ptr<float>(); auto* d = y.data_ptr<float>();
    for (int64_t i = 0; i < xc.numel(); ++i) d[i] = s[i] > 0 ? s[i] : 0;
    return y;
}
"""
ext = load_inline(name="guards_honest_relu", cpp_sources=src, functions=["relu_fwd"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu_fwd(x)
'''

# built by torch's own `load(name=..., sources=[file])`, as LLM-written candidates often are
# (cuda-l1 L2-35): torch imports such a module without entering it in sys.modules (pybind11 3
# and this file's module initialise in phases), and calls into it went unseen, a false
# `torch_fallback`. A plain CPython module: no torch headers, a build of ~2 s.
CPP_RELU_TORCH_LOAD = r'''
import os
import tempfile

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load

SRC = r"""
#include <Python.h>
static PyObject* relu(PyObject*, PyObject* args) {
    unsigned long long src, dst;
    long long n;
    if (!PyArg_ParseTuple(args, "KKL", &src, &dst, &n)) return NULL;
    const float* s = reinterpret_cast<const float*>(src);
    float* d = reinterpret_cast<float*>(dst);
    for (long long i = 0; i < n; ++i) d[i] = s[i] > 0 ? s[i] : 0.0f;
    Py_RETURN_NONE;
}
static PyMethodDef methods[] = {{"relu", relu, METH_VARARGS, "relu of n floats"}, {NULL, NULL, 0, NULL}};
static PyModuleDef_Slot slots[] = {{0, NULL}};
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "guards_honest_relu_load", NULL, 0, methods, slots};
PyMODINIT_FUNC PyInit_guards_honest_relu_load(void) { return PyModuleDef_Init(&mod); }
"""
folder = tempfile.mkdtemp()
with open(os.path.join(folder, "relu.cpp"), "w") as f:
    f.write(SRC)
ext = load(name="guards_honest_relu_load", sources=[os.path.join(folder, "relu.cpp")], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        ext.relu(x.data_ptr(), y.data_ptr(), x.numel())
        return y
'''

HONEST = {
    "relu_clamp": (T.RELU, "torch", model("return x.clamp_min(0)")),
    "relu_where": (T.RELU, "torch", model("return torch.where(x > 0, x, torch.zeros_like(x))")),
    "relu_mask": (T.RELU, "torch", model("return x * (x > 0)")),
    "relu_functional": (T.RELU, "torch", model("return F.relu(x)")),
    "relu_same_as_reference": (T.RELU, "torch", model("return torch.relu(x)")),
    "relu_own_buffer_inplace": (T.RELU, "torch", model("y = x.clone()\ny.relu_()\nreturn y")),
    "relu_joined_threads": (T.RELU, "torch", model(
        "y = torch.empty_like(x)\nhalves = [(0, x.shape[0] // 2), (x.shape[0] // 2, x.shape[0])]\n"
        "ts = [threading.Thread(target=lambda a=a, b=b: y[a:b].copy_(x[a:b].clamp_min(0))) for a, b in halves]\n"
        "for t in ts:\n    t.start()\nfor t in ts:\n    t.join()\nreturn y", imports="import threading")),
    "relu_pool_in_init": (T.RELU, "torch", model(
        "y = torch.empty_like(x)\nself.pool.submit(lambda: y.copy_(x.clamp_min(0))).result()\nreturn y",
        imports="from concurrent.futures import ThreadPoolExecutor", init="self.pool = ThreadPoolExecutor(2)")),
    "relu_noncontiguous_in": (T.RELU, "torch", model("return x.t().contiguous().clamp_min(0).t().contiguous()")),
    # a forward under inference mode returns inference tensors: the harness's NaN fill of a used
    # output (item 21) must not read as the candidate's error (it did, on cuda-l1 L3-20)
    "relu_inference_mode": (T.RELU, "torch", model("with torch.inference_mode():\n    return torch.relu(x)")),
    "big_relu_fast": (T.BIG_RELU, "torch", model("return torch.relu(x)")),
    "big_relu_clamp": (T.BIG_RELU, "torch", model("return x.clamp(min=0)")),
    "big_relu_maximum": (T.BIG_RELU, "torch", model("return torch.maximum(x, self.zero)",
                                                    init="self.zero = torch.zeros(())")),
    "linear_by_hand": (T.LINEAR, "torch", model(
        "return (x @ self.fc.weight.t() + self.fc.bias).clamp_min(0)", init="self.fc = nn.Linear(*args)")),
    "linear_addmm": (T.LINEAR, "torch", model(
        "return torch.addmm(self.fc.bias, x, self.fc.weight.t()).relu()", init="self.fc = nn.Linear(*args)")),
    "linear_fp64_accumulate": (T.LINEAR, "torch", model(
        "return F.linear(x.double(), self.fc.weight.double(), self.fc.bias.double()).relu().float()",
        init="self.fc = nn.Linear(*args)")),
    "tiny_scale": (T.TINY, "torch", model("return x / 1e6")),
    "sqmean_fp16": (T.SQMEAN, "torch", model("xf = x.float()\nreturn (xf.pow(2).sum(dim=1) / x.shape[1]).half()")),
    "absmean_fp16": (T.ABSMEAN, "torch", model("return x.abs().float().mean(dim=1).to(x.dtype)")),
    "softmax_stable": (T.VARIANT, "torch", model(
        "m = x.amax(dim=-1, keepdim=True)\ne = (x - m).exp()\nreturn e / e.sum(dim=-1, keepdim=True)")),
    "softmax_functional": (T.VARIANT, "torch", model("return F.softmax(x, dim=1)")),
    "inplace_like_reference": (T.INPLACE, "torch", model("return x.clamp_min_(0)")),
    "row_sum_matmul": (T.SUM, "torch", model("return x @ torch.ones(x.shape[1], 1, device=x.device, dtype=x.dtype)")),
    "row_sum_loop_chunks": (T.SUM, "torch", model(
        "acc = torch.zeros(x.shape[0], 1, device=x.device, dtype=x.dtype)\nfor c in x.split(64, dim=1):\n    acc += c.sum(dim=1, keepdim=True)\n"
        "return acc")),
    "triton_relu": (T.RELU, "triton", triton_model("return launch(x)")),
    "cpp_relu": (T.RELU, "cpp", CPP_RELU),
    "cpp_relu_torch_load": (T.RELU, "cpp", CPP_RELU_TORCH_LOAD),
}

# task: builtin/level1/01_ReLU.py  language: cpp  device: cpu
# style: C++ extension (cpp_sources only, functions=[...]): a plain loop over data_ptr
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <torch/extension.h>
torch::Tensor relu_cpu(torch::Tensor x) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const float* in = xc.data_ptr<float>();
    float* out = y.data_ptr<float>();
    const int64_t n = xc.numel();
    for (int64_t i = 0; i < n; ++i) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
    return y;
}
"""

b_relu__cpp_loop_ext = load_inline(
    name="b_relu__cpp_loop_ext",
    cpp_sources=cpp_source,
    functions=['relu_cpu'],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return b_relu__cpp_loop_ext.relu_cpu(x)

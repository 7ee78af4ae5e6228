# task: builtin/level1/05_LeakyReLU.py  language: cpp  device: cpu
# style: C++ extension: leaky ReLU loop with the slope passed in
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <torch/extension.h>
torch::Tensor leaky_relu_cpu(torch::Tensor x, double slope) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const float* in = xc.data_ptr<float>();
    float* out = y.data_ptr<float>();
    const float s = (float)slope;
    for (int64_t i = 0; i < xc.numel(); ++i) out[i] = in[i] > 0.0f ? in[i] : in[i] * s;
    return y;
}
"""

b_leakyrelu__cpp_loop_ext = load_inline(
    name="b_leakyrelu__cpp_loop_ext",
    cpp_sources=cpp_source,
    functions=['leaky_relu_cpu'],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, negative_slope: float):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x):
        return b_leakyrelu__cpp_loop_ext.leaky_relu_cpu(x, self.negative_slope)

# task: builtin/level1/24_Softmax.py  language: cpp  device: cpu
# style: C++ extension: stable softmax row by row
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <torch/extension.h>
#include <cmath>
#include <algorithm>
torch::Tensor softmax_cpu(torch::Tensor x) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const int64_t cols = xc.size(-1), rows = xc.numel() / cols;
    const float* in = xc.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = in + r * cols;
        float* yr = out + r * cols;
        float m = -INFINITY;
        for (int64_t j = 0; j < cols; ++j) m = std::max(m, xr[j]);
        double s = 0.0;
        for (int64_t j = 0; j < cols; ++j) { yr[j] = std::exp(xr[j] - m); s += yr[j]; }
        const float inv = (float)(1.0 / s);
        for (int64_t j = 0; j < cols; ++j) yr[j] *= inv;
    }
    return y;
}
"""

b_softmax__cpp_rows_ext = load_inline(
    name="b_softmax__cpp_rows_ext",
    cpp_sources=cpp_source,
    functions=['softmax_cpu'],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return b_softmax__cpp_rows_ext.softmax_cpu(x)

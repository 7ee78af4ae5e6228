# task: softmax_rows  language: cpp  device: cpu
# style: C++ via load_inline, row loop with a hand-written PYBIND11_MODULE binding
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_src = r"""
#include <torch/extension.h>
#include <cmath>
#include <limits>

torch::Tensor softmax_rows(torch::Tensor x) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const int64_t rows = xc.size(0), cols = xc.size(1);
    const float* px = xc.data_ptr<float>();
    float* py = y.data_ptr<float>();
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = px + r * cols;
        float* yr = py + r * cols;
        float m = -std::numeric_limits<float>::infinity();
        for (int64_t j = 0; j < cols; ++j) m = xr[j] > m ? xr[j] : m;
        float s = 0.0f;
        for (int64_t j = 0; j < cols; ++j) {
            yr[j] = std::exp(xr[j] - m);
            s += yr[j];
        }
        const float inv = 1.0f / s;
        for (int64_t j = 0; j < cols; ++j) yr[j] *= inv;
    }
    return y;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("softmax_rows", &softmax_rows, "row softmax (CPU)");
}
"""

ext = load_inline(name="fidelity_softmax_rows_cpp", cpp_sources=cpp_src, extra_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.softmax_rows(x)

# task: l2norm_rows  language: cpp  device: cpu
# style: C++ compiled-kernel cache kept on the module, built on the first forward
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor l2norm_rows(torch::Tensor x) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const int64_t rows = xc.size(0), cols = xc.size(1);
    const float* px = xc.data_ptr<float>();
    float* py = y.data_ptr<float>();
    for (int64_t r = 0; r < rows; ++r) {
        double s = 0.0;
        for (int64_t j = 0; j < cols; ++j) s += (double)px[r * cols + j] * px[r * cols + j];
        const float inv = (float)(1.0 / std::sqrt(s));
        for (int64_t j = 0; j < cols; ++j) py[r * cols + j] = px[r * cols + j] * inv;
    }
    return y;
}
"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._ext = None

    def forward(self, x):
        if self._ext is None:
            self._ext = load_inline(name="fidelity_l2norm_cpp", cpp_sources=CPP, functions=["l2norm_rows"],
                                    extra_cflags=["-O3"])
        return self._ext.l2norm_rows(x)

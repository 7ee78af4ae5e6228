# task: builtin/level1/21_RMSNorm.py  language: cpp  device: cpu
# style: C++ extension: RMSNorm row loop with double accumulation
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <torch/extension.h>
#include <cmath>
torch::Tensor rmsnorm_cpu(torch::Tensor x, torch::Tensor w, double eps) {
    auto xc = x.contiguous();
    auto wc = w.contiguous();
    auto y = torch::empty_like(xc);
    const int64_t cols = xc.size(-1), rows = xc.numel() / cols;
    const float* in = xc.data_ptr<float>();
    const float* wp = wc.data_ptr<float>();
    float* out = y.data_ptr<float>();
    for (int64_t r = 0; r < rows; ++r) {
        double ss = 0.0;
        for (int64_t j = 0; j < cols; ++j) ss += (double)in[r * cols + j] * in[r * cols + j];
        const float rs = (float)(1.0 / std::sqrt(ss / cols + eps));
        for (int64_t j = 0; j < cols; ++j) out[r * cols + j] = in[r * cols + j] * rs * wp[j];
    }
    return y;
}
"""

b_rmsnorm__cpp_rows_ext = load_inline(
    name="b_rmsnorm__cpp_rows_ext",
    cpp_sources=cpp_source,
    functions=['rmsnorm_cpu'],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(hidden))

    def forward(self, x):
        return b_rmsnorm__cpp_rows_ext.rmsnorm_cpu(x, self.weight, self.eps)

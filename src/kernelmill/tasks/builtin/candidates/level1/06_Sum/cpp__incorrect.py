# Row sum as a C++ CPU extension with an off-by-one loop bound: the last
# element of every row is left out. Expected verdict: incorrect.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <torch/extension.h>

torch::Tensor row_sum_cpu(torch::Tensor x) {
    auto xc = x.contiguous();
    int64_t cols = xc.size(-1);
    int64_t rows = xc.numel() / cols;
    auto sizes = xc.sizes().vec();
    sizes.back() = 1;
    auto out = torch::empty(sizes, xc.options());
    const float* src = xc.data_ptr<float>();
    float* dst = out.data_ptr<float>();
    for (int64_t r = 0; r < rows; ++r) {
        float acc = 0.0f;
        for (int64_t c = 0; c < cols - 1; ++c) acc += src[r * cols + c];  // BUG: should be c < cols
        dst[r] = acc;
    }
    return out;
}
"""

sum_ext = load_inline(
    name="kernelmill_builtin_sum_cpp_incorrect",
    cpp_sources=cpp_source,
    functions=["row_sum_cpu"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return sum_ext.row_sum_cpu(x)

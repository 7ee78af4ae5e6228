# Fused linear + bias + ReLU as a C++ CPU extension: each output is a dot
# product of an x row and a W row (both contiguous), bias and ReLU applied
# before the store, rows split over threads; expected verdict: ok.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <torch/extension.h>
#include <ATen/Parallel.h>

torch::Tensor linear_bias_relu_cpu(torch::Tensor x, torch::Tensor W, torch::Tensor b) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && x.device().is_cpu(), "expected a float32 CPU tensor");
    TORCH_CHECK(x.size(1) == W.size(1) && W.size(0) == b.size(0), "shape mismatch");
    auto xc = x.contiguous(), Wc = W.contiguous(), bc = b.contiguous();
    const int64_t M = xc.size(0), K = xc.size(1), N = Wc.size(0);
    auto y = torch::empty({M, N}, xc.options());
    const float* xp = xc.data_ptr<float>();
    const float* wp = Wc.data_ptr<float>();
    const float* bp = bc.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    at::parallel_for(0, M, 1, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
            for (int64_t j = 0; j < N; ++j) {
                float acc = 0.0f;
                for (int64_t k = 0; k < K; ++k) acc += xp[i * K + k] * wp[j * K + k];
                acc += bp[j];
                yp[i * N + j] = acc > 0.0f ? acc : 0.0f;
            }
        }
    });
    return y;
}
"""

fused_ext = load_inline(
    name="kernelmill_builtin_gemm_bias_relu_cpp_ok",
    cpp_sources=cpp_source,
    functions=["linear_bias_relu_cpu"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return fused_ext.linear_bias_relu_cpu(x, self.gemm.weight, self.gemm.bias)

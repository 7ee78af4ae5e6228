# task: kernelbench/level2/12_Gemm_Multiply_LeakyReLU.py  language: cuda  device: cuda
# style: module-level load_inline with functions=[...]; grid-stride loop
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void kb2_12_gemm_mul_leaky_cuda_module_functions_kernel(const float* __restrict__ y_in, float* __restrict__ y_out, int64_t n, float mult, float slope) {
    int64_t stride = (int64_t)blockDim.x * gridDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float v = y_in[i];
        y_out[i] = (v * mult) > 0.0f ? (v * mult) : (v * mult) * slope;
    }
}

torch::Tensor fused_epilogue(torch::Tensor y_in_, double mult, double slope) {
    TORCH_CHECK(y_in_.is_cuda(), "input must be a CUDA tensor");
    TORCH_CHECK(y_in_.scalar_type() == torch::kFloat32, "float32 only");
    auto y_t = y_in_.contiguous();
    auto out = torch::empty_like(y_t);
    int64_t n = y_t.numel();
    const int threads = 256;
    if (n == 0) return out;
    auto y = y_t;
    kb2_12_gemm_mul_leaky_cuda_module_functions_kernel<<<(unsigned int)std::min<int64_t>((n + threads - 1) / threads, 4096), threads>>>(y_t.data_ptr<float>(), out.data_ptr<float>(), n, (float)mult, (float)slope);
    return out;
}
"""

cpp_src = "torch::Tensor fused_epilogue(torch::Tensor y_in_, double mult, double slope);"

kb2_12_gemm_mul_leaky__cuda_module_functions_op = load_inline(
    name="kb2_12_gemm_mul_leaky__cuda_module_functions_ext",
    cpp_sources=cpp_src,
    cuda_sources=cuda_src,
    functions=["fused_epilogue"],
    verbose=False,
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, multiplier, negative_slope):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.multiplier = multiplier
        self.negative_slope = negative_slope

    def forward(self, x):
        y = self.gemm(x)
        return kb2_12_gemm_mul_leaky__cuda_module_functions_op.fused_epilogue(y, self.multiplier, self.negative_slope)

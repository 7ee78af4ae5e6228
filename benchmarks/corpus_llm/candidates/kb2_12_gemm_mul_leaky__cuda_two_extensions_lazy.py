# task: kernelbench/level2/12_Gemm_Multiply_LeakyReLU.py  language: cuda  device: cuda
# style: several extensions, each built on first use; multiply and LeakyReLU as two extensions built on first use
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

scale_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void kb2_12_scale_kernel(const float* __restrict__ y_in, float* __restrict__ y_out, int64_t n, float mult) {
    int64_t stride = (int64_t)blockDim.x * gridDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float v = y_in[i];
        y_out[i] = v * mult;
    }
}

torch::Tensor scale_inplace(torch::Tensor y_in_, double mult) {
    TORCH_CHECK(y_in_.is_cuda(), "input must be a CUDA tensor");
    TORCH_CHECK(y_in_.scalar_type() == torch::kFloat32, "float32 only");
    auto y_t = y_in_.contiguous();
    auto out = y_t;
    int64_t n = y_t.numel();
    const int threads = 256;
    if (n == 0) return out;
    auto y = y_t;
    kb2_12_scale_kernel<<<(unsigned int)std::min<int64_t>((n + threads - 1) / threads, 4096), threads>>>(y_t.data_ptr<float>(), out.data_ptr<float>(), n, (float)mult);
    return out;
}
"""
scale_cpp = "torch::Tensor scale_inplace(torch::Tensor y_in_, double mult);"

leaky_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void kb2_12_leaky_kernel(const float* __restrict__ y_in, float* __restrict__ y_out, int64_t n, float slope) {
    int64_t stride = (int64_t)blockDim.x * gridDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float v = y_in[i];
        y_out[i] = v > 0.0f ? v : v * slope;
    }
}

torch::Tensor leaky_inplace(torch::Tensor y_in_, double slope) {
    TORCH_CHECK(y_in_.is_cuda(), "input must be a CUDA tensor");
    TORCH_CHECK(y_in_.scalar_type() == torch::kFloat32, "float32 only");
    auto y_t = y_in_.contiguous();
    auto out = y_t;
    int64_t n = y_t.numel();
    const int threads = 256;
    if (n == 0) return out;
    auto y = y_t;
    kb2_12_leaky_kernel<<<(unsigned int)std::min<int64_t>((n + threads - 1) / threads, 4096), threads>>>(y_t.data_ptr<float>(), out.data_ptr<float>(), n, (float)slope);
    return out;
}
"""
leaky_cpp = "torch::Tensor leaky_inplace(torch::Tensor y_in_, double slope);"

_EXTS = {}


def _ext(which):
    if which not in _EXTS:
        table = {
            "scale": ("kb2_12_gemm_mul_leaky__cuda_two_extensions_lazy_scale", scale_cpp, scale_source, ['scale_inplace']),
            "leaky": ("kb2_12_gemm_mul_leaky__cuda_two_extensions_lazy_leaky", leaky_cpp, leaky_source, ['leaky_inplace']),
        }
        ext_name, cpp, cuda, fns = table[which]
        _EXTS[which] = load_inline(name=ext_name, cpp_sources=cpp, cuda_sources=cuda, functions=fns, verbose=False)
    return _EXTS[which]


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, multiplier, negative_slope):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.multiplier = multiplier
        self.negative_slope = negative_slope

    def forward(self, x):
        y = self.gemm(x)
        y = _ext("scale").scale_inplace(y, self.multiplier)
        return _ext("leaky").leaky_inplace(y, self.negative_slope)

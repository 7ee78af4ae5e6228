# task: builtin/level1/02_GELU.py  language: cuda  device: cuda
# style: load_inline on the first forward, cached on the module (attribute); float4 loads with a scalar tail
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__device__ __forceinline__ float gelu_erf(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }

__device__ __forceinline__ float b_gelu_cuda_lazy_attr_float4_op(float v) {
    return gelu_erf(v);
}

__global__ void b_gelu_cuda_lazy_attr_float4_kernel_vec4(const float4* __restrict__ x4, float4* __restrict__ y4, int64_t n4) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 a = x4[i];
        float4 b;
        b.x = b_gelu_cuda_lazy_attr_float4_op(a.x);
        b.y = b_gelu_cuda_lazy_attr_float4_op(a.y);
        b.z = b_gelu_cuda_lazy_attr_float4_op(a.z);
        b.w = b_gelu_cuda_lazy_attr_float4_op(a.w);
        y4[i] = b;
    }
}

__global__ void b_gelu_cuda_lazy_attr_float4_kernel_tail(const float* __restrict__ x, float* __restrict__ y, int64_t start, int64_t n) {
    int64_t i = start + (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = b_gelu_cuda_lazy_attr_float4_op(x[i]);
}

torch::Tensor gelu_forward(torch::Tensor y_in_) {
    TORCH_CHECK(y_in_.is_cuda(), "input must be a CUDA tensor");
    TORCH_CHECK(y_in_.scalar_type() == torch::kFloat32, "float32 only");
    auto y_t = y_in_.contiguous();
    auto out = torch::empty_like(y_t);
    int64_t n = y_t.numel();
    int64_t n4 = n / 4;
    const int threads = 256;
    if (n4 > 0) {
        int64_t blocks = (n4 + threads - 1) / threads;
        b_gelu_cuda_lazy_attr_float4_kernel_vec4<<<(unsigned int)blocks, threads>>>(
            reinterpret_cast<const float4*>(y_t.data_ptr<float>()), reinterpret_cast<float4*>(out.data_ptr<float>()), n4);
    }
    int64_t rem = n - n4 * 4;
    if (rem > 0) {
        b_gelu_cuda_lazy_attr_float4_kernel_tail<<<1, 256>>>(y_t.data_ptr<float>(), out.data_ptr<float>(), n4 * 4, n);
    }
    return out;
}
"""
CPP_SRC = "torch::Tensor gelu_forward(torch::Tensor y_in_);"


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._ext = None

    def forward(self, x):
        if self._ext is None:
            self._ext = load_inline(name="b_gelu__cuda_lazy_attr_float4_ext", cpp_sources=CPP_SRC, cuda_sources=CUDA_SRC, functions=["gelu_forward"])
        return self._ext.gelu_forward(x)

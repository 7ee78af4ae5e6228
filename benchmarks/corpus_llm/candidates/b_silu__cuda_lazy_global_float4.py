# task: builtin/level1/04_SiLU.py  language: cuda  device: cuda
# style: load_inline on the first forward, cached in a module global; float4 loads with a scalar tail
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__device__ __forceinline__ float b_silu_cuda_lazy_global_float4_op(float v) {
    return v / (1.0f + expf(-v));
}

__global__ void b_silu_cuda_lazy_global_float4_kernel_vec4(const float4* __restrict__ x4, float4* __restrict__ y4, int64_t n4) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 a = x4[i];
        float4 b;
        b.x = b_silu_cuda_lazy_global_float4_op(a.x);
        b.y = b_silu_cuda_lazy_global_float4_op(a.y);
        b.z = b_silu_cuda_lazy_global_float4_op(a.z);
        b.w = b_silu_cuda_lazy_global_float4_op(a.w);
        y4[i] = b;
    }
}

__global__ void b_silu_cuda_lazy_global_float4_kernel_tail(const float* __restrict__ x, float* __restrict__ y, int64_t start, int64_t n) {
    int64_t i = start + (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = b_silu_cuda_lazy_global_float4_op(x[i]);
}

torch::Tensor swish_cuda(torch::Tensor y_in_) {
    TORCH_CHECK(y_in_.is_cuda(), "input must be a CUDA tensor");
    TORCH_CHECK(y_in_.scalar_type() == torch::kFloat32, "float32 only");
    auto y_t = y_in_.contiguous();
    auto out = torch::empty_like(y_t);
    int64_t n = y_t.numel();
    int64_t n4 = n / 4;
    const int threads = 256;
    if (n4 > 0) {
        int64_t blocks = (n4 + threads - 1) / threads;
        b_silu_cuda_lazy_global_float4_kernel_vec4<<<(unsigned int)blocks, threads>>>(
            reinterpret_cast<const float4*>(y_t.data_ptr<float>()), reinterpret_cast<float4*>(out.data_ptr<float>()), n4);
    }
    int64_t rem = n - n4 * 4;
    if (rem > 0) {
        b_silu_cuda_lazy_global_float4_kernel_tail<<<1, 256>>>(y_t.data_ptr<float>(), out.data_ptr<float>(), n4 * 4, n);
    }
    return out;
}
"""
_DECL = "torch::Tensor swish_cuda(torch::Tensor y_in_);"
_EXT = None


def _get_ext():
    global _EXT
    if _EXT is None:
        _EXT = load_inline(name="b_silu__cuda_lazy_global_float4_ext", cpp_sources=_DECL, cuda_sources=_SRC, functions=["swish_cuda"], verbose=False)
    return _EXT


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        ext = _get_ext()
        return ext.swish_cuda(x)

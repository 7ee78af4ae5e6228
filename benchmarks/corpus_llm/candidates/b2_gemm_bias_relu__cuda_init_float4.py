# task: builtin/level2/01_Gemm_Bias_ReLU.py  language: cuda  device: cuda
# style: load_inline inside __init__ (sources at module level), kept on self; float4 loads with a scalar tail
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

KERNEL_SOURCE = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__device__ __forceinline__ float b2_gemm_bias_relu_cuda_init_float4_op(float v) {
    return fmaxf(v, 0.0f);
}

__global__ void b2_gemm_bias_relu_cuda_init_float4_kernel_vec4(const float4* __restrict__ x4, float4* __restrict__ y4, int64_t n4) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 a = x4[i];
        float4 b;
        b.x = b2_gemm_bias_relu_cuda_init_float4_op(a.x);
        b.y = b2_gemm_bias_relu_cuda_init_float4_op(a.y);
        b.z = b2_gemm_bias_relu_cuda_init_float4_op(a.z);
        b.w = b2_gemm_bias_relu_cuda_init_float4_op(a.w);
        y4[i] = b;
    }
}

__global__ void b2_gemm_bias_relu_cuda_init_float4_kernel_tail(const float* __restrict__ x, float* __restrict__ y, int64_t start, int64_t n) {
    int64_t i = start + (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = b2_gemm_bias_relu_cuda_init_float4_op(x[i]);
}

torch::Tensor fused_epilogue(torch::Tensor y_in_) {
    TORCH_CHECK(y_in_.is_cuda(), "input must be a CUDA tensor");
    TORCH_CHECK(y_in_.scalar_type() == torch::kFloat32, "float32 only");
    auto y_t = y_in_.contiguous();
    auto out = torch::empty_like(y_t);
    int64_t n = y_t.numel();
    int64_t n4 = n / 4;
    const int threads = 256;
    if (n4 > 0) {
        int64_t blocks = (n4 + threads - 1) / threads;
        b2_gemm_bias_relu_cuda_init_float4_kernel_vec4<<<(unsigned int)blocks, threads>>>(
            reinterpret_cast<const float4*>(y_t.data_ptr<float>()), reinterpret_cast<float4*>(out.data_ptr<float>()), n4);
    }
    int64_t rem = n - n4 * 4;
    if (rem > 0) {
        b2_gemm_bias_relu_cuda_init_float4_kernel_tail<<<1, 256>>>(y_t.data_ptr<float>(), out.data_ptr<float>(), n4 * 4, n);
    }
    return out;
}
"""

KERNEL_DECL = "torch::Tensor fused_epilogue(torch::Tensor y_in_);"


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.kernels = load_inline(name="b2_gemm_bias_relu__cuda_init_float4_ext", cpp_sources=KERNEL_DECL, cuda_sources=KERNEL_SOURCE, functions=["fused_epilogue"], verbose=False)

    def forward(self, x):
        y = self.gemm(x)
        return self.kernels.fused_epilogue(y)

# task: kernelbench/level1/88_MinGPTNewGelu.py  language: cuda  device: cuda
# style: module-level load_inline with functions=[...]; float4 loads with a scalar tail
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__device__ __forceinline__ float gelu_tanh(float x) {
    const float k0 = 0.7978845608028654f;
    return 0.5f * x * (1.0f + tanhf(k0 * (x + 0.044715f * x * x * x)));
}

__device__ __forceinline__ float kb1_88_newgelu_cuda_module_functions_float4_op(float v) {
    return gelu_tanh(v);
}

__global__ void kb1_88_newgelu_cuda_module_functions_float4_kernel_vec4(const float4* __restrict__ x4, float4* __restrict__ y4, int64_t n4) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 a = x4[i];
        float4 b;
        b.x = kb1_88_newgelu_cuda_module_functions_float4_op(a.x);
        b.y = kb1_88_newgelu_cuda_module_functions_float4_op(a.y);
        b.z = kb1_88_newgelu_cuda_module_functions_float4_op(a.z);
        b.w = kb1_88_newgelu_cuda_module_functions_float4_op(a.w);
        y4[i] = b;
    }
}

__global__ void kb1_88_newgelu_cuda_module_functions_float4_kernel_tail(const float* __restrict__ x, float* __restrict__ y, int64_t start, int64_t n) {
    int64_t i = start + (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = kb1_88_newgelu_cuda_module_functions_float4_op(x[i]);
}

torch::Tensor newgelu_forward(torch::Tensor y_in_) {
    TORCH_CHECK(y_in_.is_cuda(), "input must be a CUDA tensor");
    TORCH_CHECK(y_in_.scalar_type() == torch::kFloat32, "float32 only");
    auto y_t = y_in_.contiguous();
    auto out = torch::empty_like(y_t);
    int64_t n = y_t.numel();
    int64_t n4 = n / 4;
    const int threads = 256;
    if (n4 > 0) {
        int64_t blocks = (n4 + threads - 1) / threads;
        kb1_88_newgelu_cuda_module_functions_float4_kernel_vec4<<<(unsigned int)blocks, threads>>>(
            reinterpret_cast<const float4*>(y_t.data_ptr<float>()), reinterpret_cast<float4*>(out.data_ptr<float>()), n4);
    }
    int64_t rem = n - n4 * 4;
    if (rem > 0) {
        kb1_88_newgelu_cuda_module_functions_float4_kernel_tail<<<1, 256>>>(y_t.data_ptr<float>(), out.data_ptr<float>(), n4 * 4, n);
    }
    return out;
}
"""

cpp_src = "torch::Tensor newgelu_forward(torch::Tensor y_in_);"

kb1_88_newgelu__cuda_module_functions_float4_op = load_inline(
    name="kb1_88_newgelu__cuda_module_functions_float4_ext",
    cpp_sources=cpp_src,
    cuda_sources=cuda_src,
    functions=["newgelu_forward"],
    verbose=False,
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return kb1_88_newgelu__cuda_module_functions_float4_op.newgelu_forward(x)

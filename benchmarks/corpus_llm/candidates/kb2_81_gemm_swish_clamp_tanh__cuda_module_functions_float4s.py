# task: kernelbench/level2/81_Gemm_Swish_Divide_Clamp_Tanh_Clamp.py  language: cuda  device: cuda
# style: module-level load_inline with functions=[...]; float4 loads, launched on the current stream with a launch check
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <ATen/cuda/CUDAContext.h>

__device__ __forceinline__ float sigmoidf_(float x) { return 1.0f / (1.0f + expf(-x)); }

__device__ __forceinline__ float kb2_81_gemm_swish_clamp_tanh_cuda_module_functions_float4s_op(float v) {
    return fminf(fmaxf(tanhf(fminf(fmaxf(v * sigmoidf_(v) * 0.5f, -1.0f), 1.0f)), -1.0f), 1.0f);
}

__global__ void kb2_81_gemm_swish_clamp_tanh_cuda_module_functions_float4s_kernel_vec4(const float4* __restrict__ x4, float4* __restrict__ y4, int64_t n4) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 a = x4[i];
        float4 b;
        b.x = kb2_81_gemm_swish_clamp_tanh_cuda_module_functions_float4s_op(a.x);
        b.y = kb2_81_gemm_swish_clamp_tanh_cuda_module_functions_float4s_op(a.y);
        b.z = kb2_81_gemm_swish_clamp_tanh_cuda_module_functions_float4s_op(a.z);
        b.w = kb2_81_gemm_swish_clamp_tanh_cuda_module_functions_float4s_op(a.w);
        y4[i] = b;
    }
}

__global__ void kb2_81_gemm_swish_clamp_tanh_cuda_module_functions_float4s_kernel_tail(const float* __restrict__ x, float* __restrict__ y, int64_t start, int64_t n) {
    int64_t i = start + (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = kb2_81_gemm_swish_clamp_tanh_cuda_module_functions_float4s_op(x[i]);
}

torch::Tensor fused_epilogue(torch::Tensor y_in_) {
    TORCH_CHECK(y_in_.is_cuda(), "input must be a CUDA tensor");
    TORCH_CHECK(y_in_.scalar_type() == torch::kFloat32, "float32 only");
    auto y_t = y_in_.contiguous();
    auto out = torch::empty_like(y_t);
    cudaStream_t stream = at::cuda::getCurrentCUDAStream();
    int64_t n = y_t.numel();
    int64_t n4 = n / 4;
    const int threads = 256;
    if (n4 > 0) {
        int64_t blocks = (n4 + threads - 1) / threads;
        kb2_81_gemm_swish_clamp_tanh_cuda_module_functions_float4s_kernel_vec4<<<(unsigned int)blocks, threads, 0, stream>>>(
            reinterpret_cast<const float4*>(y_t.data_ptr<float>()), reinterpret_cast<float4*>(out.data_ptr<float>()), n4);
    }
    int64_t rem = n - n4 * 4;
    if (rem > 0) {
        kb2_81_gemm_swish_clamp_tanh_cuda_module_functions_float4s_kernel_tail<<<1, 256, 0, stream>>>(y_t.data_ptr<float>(), out.data_ptr<float>(), n4 * 4, n);
    }
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_src = "torch::Tensor fused_epilogue(torch::Tensor y_in_);"

kb2_81_gemm_swish_clamp_tanh__cuda_module_functions_float4s_op = load_inline(
    name="kb2_81_gemm_swish_clamp_tanh__cuda_module_functions_float4s_ext",
    cpp_sources=cpp_src,
    cuda_sources=cuda_src,
    functions=["fused_epilogue"],
    verbose=False,
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=bias)

    def forward(self, x):
        y = self.gemm(x)
        return kb2_81_gemm_swish_clamp_tanh__cuda_module_functions_float4s_op.fused_epilogue(y)

# task: kernelbench/level2/86_Matmul_Divide_GELU.py  language: cuda  device: cuda
# style: load_inline on the first forward inside try/except, torch fallback if it fails; float4 loads with a scalar tail
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

_CUDA = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__device__ __forceinline__ float gelu_erf(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }

__device__ __forceinline__ float kb2_86_matmul_div_gelu_cuda_lazy_try_float4_op(float v, float divisor) {
    return gelu_erf(v / divisor);
}

__global__ void kb2_86_matmul_div_gelu_cuda_lazy_try_float4_kernel_vec4(const float4* __restrict__ x4, float4* __restrict__ y4, int64_t n4, float divisor) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 a = x4[i];
        float4 b;
        b.x = kb2_86_matmul_div_gelu_cuda_lazy_try_float4_op(a.x, divisor);
        b.y = kb2_86_matmul_div_gelu_cuda_lazy_try_float4_op(a.y, divisor);
        b.z = kb2_86_matmul_div_gelu_cuda_lazy_try_float4_op(a.z, divisor);
        b.w = kb2_86_matmul_div_gelu_cuda_lazy_try_float4_op(a.w, divisor);
        y4[i] = b;
    }
}

__global__ void kb2_86_matmul_div_gelu_cuda_lazy_try_float4_kernel_tail(const float* __restrict__ x, float* __restrict__ y, int64_t start, int64_t n, float divisor) {
    int64_t i = start + (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = kb2_86_matmul_div_gelu_cuda_lazy_try_float4_op(x[i], divisor);
}

torch::Tensor fused_epilogue(torch::Tensor y_in_, double divisor) {
    TORCH_CHECK(y_in_.is_cuda(), "input must be a CUDA tensor");
    TORCH_CHECK(y_in_.scalar_type() == torch::kFloat32, "float32 only");
    auto y_t = y_in_.contiguous();
    auto out = torch::empty_like(y_t);
    int64_t n = y_t.numel();
    int64_t n4 = n / 4;
    const int threads = 256;
    if (n4 > 0) {
        int64_t blocks = (n4 + threads - 1) / threads;
        kb2_86_matmul_div_gelu_cuda_lazy_try_float4_kernel_vec4<<<(unsigned int)blocks, threads>>>(
            reinterpret_cast<const float4*>(y_t.data_ptr<float>()), reinterpret_cast<float4*>(out.data_ptr<float>()), n4, (float)divisor);
    }
    int64_t rem = n - n4 * 4;
    if (rem > 0) {
        kb2_86_matmul_div_gelu_cuda_lazy_try_float4_kernel_tail<<<1, 256>>>(y_t.data_ptr<float>(), out.data_ptr<float>(), n4 * 4, n, (float)divisor);
    }
    return out;
}
"""
_CPP = "torch::Tensor fused_epilogue(torch::Tensor y_in_, double divisor);"


class ModelNew(nn.Module):
    def __init__(self, input_size, output_size, divisor):
        super().__init__()
        self.linear = nn.Linear(input_size, output_size)
        self.divisor = divisor
        self._ext = None
        self._ext_failed = False

    def forward(self, x):
        if self._ext is None and not self._ext_failed:
            try:
                self._ext = load_inline(name="kb2_86_matmul_div_gelu__cuda_lazy_try_float4_ext", cpp_sources=_CPP, cuda_sources=_CUDA, functions=["fused_epilogue"], verbose=False)
            except Exception as exc:  # no compiler: stay on the torch path
                print(f"custom kernel unavailable, using torch: {exc}")
                self._ext_failed = True
        if self._ext is not None and x.is_cuda:
            y = self.linear(x)
            return self._ext.fused_epilogue(y, self.divisor)
        y = self.linear(x)
        return F.gelu(y / self.divisor)

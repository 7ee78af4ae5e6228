# task: kernelbench/level2/86_Matmul_Divide_GELU.py  language: cuda  device: cuda
# style: load_inline inside __init__ with the sources as local strings; grid-stride loop
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline


class ModelNew(nn.Module):
    def __init__(self, input_size, output_size, divisor):
        super().__init__()
        self.linear = nn.Linear(input_size, output_size)
        self.divisor = divisor
        cuda_code = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__device__ __forceinline__ float gelu_erf(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }

__global__ void kb2_86_matmul_div_gelu_cuda_init_local_kernel(const float* __restrict__ y_in, float* __restrict__ y_out, int64_t n, float divisor) {
    int64_t stride = (int64_t)blockDim.x * gridDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float v = y_in[i];
        y_out[i] = gelu_erf(v / divisor);
    }
}

torch::Tensor fused_epilogue(torch::Tensor y_in_, double divisor) {
    auto y_t = y_in_.contiguous();
    auto out = torch::empty_like(y_t);
    int64_t n = y_t.numel();
    const int threads = 256;
    if (n == 0) return out;
    auto y = y_t;
    kb2_86_matmul_div_gelu_cuda_init_local_kernel<<<(unsigned int)std::min<int64_t>((n + threads - 1) / threads, 4096), threads>>>(y_t.data_ptr<float>(), out.data_ptr<float>(), n, (float)divisor);
    return out;
}
"""
        cpp_code = "torch::Tensor fused_epilogue(torch::Tensor y_in_, double divisor);"
        self.ext = load_inline(
            name="kb2_86_matmul_div_gelu__cuda_init_local_ext",
            cpp_sources=cpp_code,
            cuda_sources=cuda_code,
            functions=["fused_epilogue"],
            extra_cuda_cflags=["-O3"],
        )

    def forward(self, x):
        y = self.linear(x)
        return self.ext.fused_epilogue(y, self.divisor)

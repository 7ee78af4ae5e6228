# task: builtin/level1/02_GELU.py  language: cuda  device: cuda
# style: load_inline inside __init__ with the sources as local strings; one element per thread
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        cuda_code = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__device__ __forceinline__ float gelu_erf(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }

__global__ void b_gelu_cuda_init_local_oneper_kernel(const float* __restrict__ y_in, float* __restrict__ y_out, int64_t n) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = y_in[i];
        y_out[i] = gelu_erf(v);
    }
}

torch::Tensor gelu_forward(torch::Tensor y_in_) {
    auto y_t = y_in_.contiguous();
    auto out = torch::empty_like(y_t);
    int64_t n = y_t.numel();
    const int threads = 256;
    if (n == 0) return out;
    auto y = y_t;
    b_gelu_cuda_init_local_oneper_kernel<<<(unsigned int)((n + threads - 1) / threads), threads>>>(y_t.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}
"""
        cpp_code = "torch::Tensor gelu_forward(torch::Tensor y_in_);"
        self.ext = load_inline(
            name="b_gelu__cuda_init_local_oneper_ext",
            cpp_sources=cpp_code,
            cuda_sources=cuda_code,
            functions=["gelu_forward"],
            extra_cuda_cflags=["-O3"],
        )

    def forward(self, x):
        return self.ext.gelu_forward(x)

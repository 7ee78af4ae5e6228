# task: kernelbench/level1/88_MinGPTNewGelu.py  language: cuda  device: cuda
# style: load_inline inside __init__ (sources at module level), kept on self; grid-stride loop
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

KERNEL_SOURCE = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__device__ __forceinline__ float gelu_tanh(float x) {
    const float k0 = 0.7978845608028654f;
    return 0.5f * x * (1.0f + tanhf(k0 * (x + 0.044715f * x * x * x)));
}

__global__ void kb1_88_newgelu_cuda_init_kernel(const float* __restrict__ y_in, float* __restrict__ y_out, int64_t n) {
    int64_t stride = (int64_t)blockDim.x * gridDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float v = y_in[i];
        y_out[i] = gelu_tanh(v);
    }
}

torch::Tensor newgelu_forward(torch::Tensor y_in_) {
    TORCH_CHECK(y_in_.is_cuda(), "input must be a CUDA tensor");
    TORCH_CHECK(y_in_.scalar_type() == torch::kFloat32, "float32 only");
    auto y_t = y_in_.contiguous();
    auto out = torch::empty_like(y_t);
    int64_t n = y_t.numel();
    const int threads = 256;
    if (n == 0) return out;
    auto y = y_t;
    kb1_88_newgelu_cuda_init_kernel<<<(unsigned int)std::min<int64_t>((n + threads - 1) / threads, 4096), threads>>>(y_t.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}
"""

KERNEL_DECL = "torch::Tensor newgelu_forward(torch::Tensor y_in_);"


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.kernels = load_inline(name="kb1_88_newgelu__cuda_init_ext", cpp_sources=KERNEL_DECL, cuda_sources=KERNEL_SOURCE, functions=["newgelu_forward"], verbose=False)

    def forward(self, x):
        return self.kernels.newgelu_forward(x)

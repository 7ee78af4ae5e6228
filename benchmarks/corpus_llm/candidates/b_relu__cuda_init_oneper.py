# task: builtin/level1/01_ReLU.py  language: cuda  device: cuda
# style: load_inline inside __init__ (sources at module level), kept on self; one element per thread
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

KERNEL_SOURCE = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void b_relu_cuda_init_oneper_kernel(const float* __restrict__ y_in, float* __restrict__ y_out, int64_t n) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = y_in[i];
        y_out[i] = fmaxf(v, 0.0f);
    }
}

torch::Tensor relu_forward(torch::Tensor y_in_) {
    TORCH_CHECK(y_in_.is_cuda(), "input must be a CUDA tensor");
    TORCH_CHECK(y_in_.scalar_type() == torch::kFloat32, "float32 only");
    auto y_t = y_in_.contiguous();
    auto out = torch::empty_like(y_t);
    int64_t n = y_t.numel();
    const int threads = 256;
    if (n == 0) return out;
    auto y = y_t;
    b_relu_cuda_init_oneper_kernel<<<(unsigned int)((n + threads - 1) / threads), threads>>>(y_t.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}
"""

KERNEL_DECL = "torch::Tensor relu_forward(torch::Tensor y_in_);"


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.kernels = load_inline(name="b_relu__cuda_init_oneper_ext", cpp_sources=KERNEL_DECL, cuda_sources=KERNEL_SOURCE, functions=["relu_forward"], verbose=False)

    def forward(self, x):
        return self.kernels.relu_forward(x)

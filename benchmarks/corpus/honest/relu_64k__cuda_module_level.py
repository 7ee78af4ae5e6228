# task: relu_64k  language: cuda  device: cuda
# style: CUDA load_inline at module level, functions=[...] list
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = v > 0.0f ? v : 0.0f;
    }
}

torch::Tensor relu_cuda(torch::Tensor x) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    int n = xc.numel();
    int threads = 256;
    int blocks = (n + threads - 1) / threads;
    relu_kernel<<<blocks, threads>>>(xc.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

cpp_source = "torch::Tensor relu_cuda(torch::Tensor x);"

relu_ext = load_inline(
    name="fidelity_relu_module_level",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["relu_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return relu_ext.relu_cuda(x)

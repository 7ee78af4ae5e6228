# task: builtin/level3/01_MLP.py  language: cuda  device: cuda
# style: several load_inline extensions at module level; cuBLAS mm per layer, bias+ReLU and bias epilogues as two extensions
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

bias_relu_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
__global__ void bias_relu_kernel(float* __restrict__ y, const float* __restrict__ bias, int64_t cols, int64_t n) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)blockDim.x * gridDim.x) {
        float v = y[i] + bias[i % cols];
        y[i] = fmaxf(v, 0.0f);
    }
}
torch::Tensor bias_relu_(torch::Tensor y, torch::Tensor bias) {
    TORCH_CHECK(y.is_contiguous(), "y must be contiguous");
    int64_t n = y.numel();
    bias_relu_kernel<<<(unsigned int)std::min<int64_t>((n + 255) / 256, 8192), 256>>>(y.data_ptr<float>(), bias.data_ptr<float>(), y.size(-1), n);
    return y;
}
"""
bias_relu_cpp = "torch::Tensor bias_relu_(torch::Tensor y, torch::Tensor bias);"

bias_add_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
__global__ void bias_add_kernel(float* __restrict__ y, const float* __restrict__ bias, int64_t cols, int64_t n) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)blockDim.x * gridDim.x) {
        float v = y[i] + bias[i % cols];
        y[i] = v;
    }
}
torch::Tensor bias_add_(torch::Tensor y, torch::Tensor bias) {
    TORCH_CHECK(y.is_contiguous(), "y must be contiguous");
    int64_t n = y.numel();
    bias_add_kernel<<<(unsigned int)std::min<int64_t>((n + 255) / 256, 8192), 256>>>(y.data_ptr<float>(), bias.data_ptr<float>(), y.size(-1), n);
    return y;
}
"""
bias_add_cpp = "torch::Tensor bias_add_(torch::Tensor y, torch::Tensor bias);"

bias_relu = load_inline(
    name="b3_mlp__cuda_two_extensions_bias_relu",
    cpp_sources=bias_relu_cpp,
    cuda_sources=bias_relu_source,
    functions=['bias_relu_'],
    verbose=False,
)

bias_add = load_inline(
    name="b3_mlp__cuda_two_extensions_bias_add",
    cpp_sources=bias_add_cpp,
    cuda_sources=bias_add_source,
    functions=['bias_add_'],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, input_size: int, hidden_sizes: list, output_size: int):
        super().__init__()
        layers = []
        width = input_size
        for h in hidden_sizes:
            layers += [nn.Linear(width, h), nn.ReLU()]
            width = h
        layers.append(nn.Linear(width, output_size))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        linears = [m for m in self.net if isinstance(m, nn.Linear)]
        h = x
        for i, lin in enumerate(linears):
            h = torch.mm(h, lin.weight.t())
            if i < len(linears) - 1:
                h = bias_relu.bias_relu_(h, lin.bias)
            else:
                h = bias_add.bias_add_(h, lin.bias)
        return h

# task: conv_bn_relu  language: cuda  device: cuda
# style: conv by cuDNN, BatchNorm (training mode: batch statistics, running stats updated) and ReLU fused in one CUDA kernel
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

bn_relu_src = r"""
#include <torch/extension.h>

__global__ void bn_relu_kernel(const float* x, const float* scale, const float* shift, float* y,
                               long n, int channels, int hw) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int c = (int)((i / hw) % channels);
        float v = x[i] * scale[c] + shift[c];
        y[i] = v > 0.0f ? v : 0.0f;
    }
}

torch::Tensor bn_relu(torch::Tensor x, torch::Tensor scale, torch::Tensor shift) {
    auto y = torch::empty_like(x);
    long n = x.numel();
    int channels = x.size(1);
    int hw = x.size(2) * x.size(3);
    bn_relu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), scale.data_ptr<float>(), shift.data_ptr<float>(),
                                             y.data_ptr<float>(), n, channels, hw);
    return y;
}
"""

bn_relu_ext = load_inline(name="fidelity_bn_relu", cpp_sources="torch::Tensor bn_relu(torch::Tensor x, torch::Tensor scale, torch::Tensor shift);",
                          cuda_sources=bn_relu_src, functions=["bn_relu"])


class ModelNew(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, kernel_size=3, padding=1)
        self.bn = nn.BatchNorm2d(c_out)

    def forward(self, x):
        y = self.conv(x).contiguous()
        bn = self.bn
        if bn.training:
            var, mean = torch.var_mean(y, dim=(0, 2, 3), unbiased=False)
            n = y.numel() // y.size(1)
            with torch.no_grad():
                bn.num_batches_tracked.add_(1)
                bn.running_mean.mul_(1 - bn.momentum).add_(mean, alpha=bn.momentum)
                bn.running_var.mul_(1 - bn.momentum).add_(var * (n / (n - 1)), alpha=bn.momentum)
        else:
            mean, var = bn.running_mean, bn.running_var
        scale = bn.weight * torch.rsqrt(var + bn.eps)
        shift = bn.bias - mean * scale
        return bn_relu_ext.bn_relu(y, scale.contiguous(), shift.contiguous())

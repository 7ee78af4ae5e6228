# task: scale_add  language: cuda  device: cuda
# style: CUDA load_inline built lazily in __init__, fused a*2+b in one kernel
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SOURCE = r"""
#include <torch/extension.h>

__global__ void scale_add_kernel(const float* a, const float* b, float* out, float alpha, long n) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    long stride = (long)gridDim.x * blockDim.x;
    for (; i < n; i += stride) {
        out[i] = alpha * a[i] + b[i];
    }
}

torch::Tensor scale_add(torch::Tensor a, torch::Tensor b, double alpha) {
    TORCH_CHECK(a.is_cuda() && b.is_cuda(), "inputs must be CUDA tensors");
    auto ac = a.contiguous();
    auto bc = b.contiguous();
    auto out = torch::empty_like(ac);
    long n = ac.numel();
    int threads = 256;
    long want = (n + threads - 1) / threads;
    int blocks = (int)(want < 4096 ? want : 4096);
    scale_add_kernel<<<blocks, threads>>>(ac.data_ptr<float>(), bc.data_ptr<float>(), out.data_ptr<float>(), (float)alpha, n);
    return out;
}
"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ext = load_inline(
            name="fidelity_scale_add_init",
            cpp_sources="torch::Tensor scale_add(torch::Tensor a, torch::Tensor b, double alpha);",
            cuda_sources=SOURCE,
            functions=["scale_add"],
            extra_cuda_cflags=["-O3"],
        )

    def forward(self, a, b):
        return self.ext.scale_add(a, b, 2.0)

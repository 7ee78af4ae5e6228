# task: big_add  language: cuda  device: cuda
# style: CUDA load_inline at module level, float4 vectorised loads with a scalar tail
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>

__global__ void add_vec4_kernel(const float4* a, const float4* b, float4* c, long n4) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 x = a[i];
        float4 y = b[i];
        c[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
}

__global__ void add_tail_kernel(const float* a, const float* b, float* c, long start, long n) {
    long i = start + (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

torch::Tensor add_cuda(torch::Tensor a, torch::Tensor b) {
    auto ac = a.contiguous();
    auto bc = b.contiguous();
    auto c = torch::empty_like(ac);
    long n = ac.numel();
    long n4 = n / 4;
    const int threads = 256;
    if (n4 > 0) {
        add_vec4_kernel<<<(n4 + threads - 1) / threads, threads>>>(
            reinterpret_cast<const float4*>(ac.data_ptr<float>()), reinterpret_cast<const float4*>(bc.data_ptr<float>()),
            reinterpret_cast<float4*>(c.data_ptr<float>()), n4);
    }
    if (n - n4 * 4 > 0) {
        add_tail_kernel<<<1, threads>>>(ac.data_ptr<float>(), bc.data_ptr<float>(), c.data_ptr<float>(), n4 * 4, n);
    }
    return c;
}
"""

add_ext = load_inline(name="fidelity_big_add_vec4", cpp_sources="torch::Tensor add_cuda(torch::Tensor a, torch::Tensor b);",
                      cuda_sources=cuda_source, functions=["add_cuda"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return add_ext.add_cuda(a, b)

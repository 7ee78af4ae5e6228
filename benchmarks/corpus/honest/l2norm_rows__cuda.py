# task: l2norm_rows  language: cuda  device: cuda
# style: CUDA load_inline, one block per row: sum of squares then scale
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

l2_src = r"""
#include <torch/extension.h>

__global__ void l2norm_kernel(const float* x, float* y, int cols) {
    __shared__ float red[256];
    const float* xr = x + (long)blockIdx.x * cols;
    float* yr = y + (long)blockIdx.x * cols;
    float s = 0.0f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) s += xr[j] * xr[j];
    red[threadIdx.x] = s;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) red[threadIdx.x] += red[threadIdx.x + k];
        __syncthreads();
    }
    float inv = 1.0f / sqrtf(red[0]);
    for (int j = threadIdx.x; j < cols; j += blockDim.x) yr[j] = xr[j] * inv;
}

torch::Tensor l2norm(torch::Tensor x) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    l2norm_kernel<<<xc.size(0), 256>>>(xc.data_ptr<float>(), y.data_ptr<float>(), xc.size(1));
    return y;
}
"""

l2 = load_inline(name="fidelity_l2norm_rows", cpp_sources="torch::Tensor l2norm(torch::Tensor x);", cuda_sources=l2_src,
                 functions=["l2norm"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return l2.l2norm(x)

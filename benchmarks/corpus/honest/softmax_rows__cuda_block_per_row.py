# task: softmax_rows  language: cuda  device: cuda
# style: CUDA load_inline, one block per row with shared-memory max and sum reductions
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>

__global__ void softmax_row_kernel(const float* __restrict__ x, float* __restrict__ y, int cols) {
    extern __shared__ float red[];
    const float* xr = x + (long)blockIdx.x * cols;
    float* yr = y + (long)blockIdx.x * cols;
    int t = threadIdx.x;
    float m = -INFINITY;
    for (int j = t; j < cols; j += blockDim.x) m = fmaxf(m, xr[j]);
    red[t] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) red[t] = fmaxf(red[t], red[t + s]);
        __syncthreads();
    }
    m = red[0];
    __syncthreads();
    float sum = 0.0f;
    for (int j = t; j < cols; j += blockDim.x) sum += __expf(xr[j] - m);
    red[t] = sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) red[t] += red[t + s];
        __syncthreads();
    }
    float inv = 1.0f / red[0];
    for (int j = t; j < cols; j += blockDim.x) yr[j] = __expf(xr[j] - m) * inv;
}

torch::Tensor softmax_rows(torch::Tensor x) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    int rows = xc.size(0), cols = xc.size(1);
    const int threads = 256;
    softmax_row_kernel<<<rows, threads, threads * sizeof(float)>>>(xc.data_ptr<float>(), y.data_ptr<float>(), cols);
    return y;
}
"""

softmax_ext = load_inline(name="fidelity_softmax_rows", cpp_sources="torch::Tensor softmax_rows(torch::Tensor x);",
                          cuda_sources=cuda_source, functions=["softmax_rows"], extra_cuda_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return softmax_ext.softmax_rows(x)

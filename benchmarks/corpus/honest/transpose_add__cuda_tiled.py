# task: transpose_add  language: cuda  device: cuda
# style: CUDA load_inline, 32x32 shared-memory tiles for the transposed read
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_code = r"""
#include <torch/extension.h>
#define TILE 32

__global__ void transpose_add_kernel(const float* __restrict__ x, float* __restrict__ y, int n) {
    __shared__ float tile[TILE][TILE + 1];
    int bx = blockIdx.x * TILE, by = blockIdx.y * TILE;
    for (int k = threadIdx.y; k < TILE; k += blockDim.y) {
        int r = bx + k, c = by + threadIdx.x;
        if (r < n && c < n) tile[k][threadIdx.x] = x[(long)r * n + c];
    }
    __syncthreads();
    for (int k = threadIdx.y; k < TILE; k += blockDim.y) {
        int r = by + k, c = bx + threadIdx.x;
        if (r < n && c < n) y[(long)r * n + c] = x[(long)r * n + c] + tile[threadIdx.x][k];
    }
}

torch::Tensor transpose_add(torch::Tensor x) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    int n = xc.size(0);
    dim3 block(TILE, 8);
    dim3 grid((n + TILE - 1) / TILE, (n + TILE - 1) / TILE);
    transpose_add_kernel<<<grid, block>>>(xc.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

ext = load_inline(name="fidelity_transpose_add", cpp_sources="torch::Tensor transpose_add(torch::Tensor x);",
                  cuda_sources=cuda_code, functions=["transpose_add"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return ext.transpose_add(x)

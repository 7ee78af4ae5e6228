# task: matvec  language: cuda  device: cuda
# style: CUDA built lazily on the first forward and kept on the module, one warp per row
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

KERNEL = r"""
#include <torch/extension.h>

__global__ void matvec_kernel(const float* __restrict__ a, const float* __restrict__ x, float* __restrict__ y,
                              int rows, int cols) {
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (warp >= rows) return;
    const float* ar = a + (long)warp * cols;
    float s = 0.0f;
    for (int j = lane; j < cols; j += 32) s += ar[j] * x[j];
    for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffff, s, off);
    if (lane == 0) y[warp] = s;
}

torch::Tensor matvec(torch::Tensor a, torch::Tensor x) {
    auto ac = a.contiguous();
    auto xc = x.contiguous();
    int rows = ac.size(0), cols = ac.size(1);
    auto y = torch::empty({rows, 1}, ac.options());
    const int threads = 256;
    int blocks = (rows * 32 + threads - 1) / threads;
    matvec_kernel<<<blocks, threads>>>(ac.data_ptr<float>(), xc.data_ptr<float>(), y.data_ptr<float>(), rows, cols);
    return y;
}
"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.module = None

    def forward(self, a, x):
        if self.module is None:
            self.module = load_inline(name="fidelity_matvec_warp", cpp_sources="torch::Tensor matvec(torch::Tensor a, torch::Tensor x);",
                                      cuda_sources=KERNEL, functions=["matvec"])
        return self.module.matvec(a, x)

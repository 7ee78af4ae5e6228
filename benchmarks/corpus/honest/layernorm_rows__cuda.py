# task: layernorm_rows  language: cuda  device: cuda
# style: CUDA load_inline built in __init__, one block per row, two-pass mean and variance
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>

__device__ float block_sum(float v, float* red) {
    int t = threadIdx.x;
    red[t] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) red[t] += red[t + s];
        __syncthreads();
    }
    float r = red[0];
    __syncthreads();
    return r;
}

__global__ void layernorm_kernel(const float* x, const float* w, const float* b, float* y, int cols, float eps) {
    extern __shared__ float red[];
    const float* xr = x + (long)blockIdx.x * cols;
    float* yr = y + (long)blockIdx.x * cols;
    float s = 0.0f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) s += xr[j];
    float mean = block_sum(s, red) / cols;
    float q = 0.0f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) {
        float d = xr[j] - mean;
        q += d * d;
    }
    float rstd = rsqrtf(block_sum(q, red) / cols + eps);
    for (int j = threadIdx.x; j < cols; j += blockDim.x) yr[j] = (xr[j] - mean) * rstd * w[j] + b[j];
}

torch::Tensor layernorm(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    int rows = xc.size(0), cols = xc.size(1);
    const int threads = 512;
    layernorm_kernel<<<rows, threads, threads * sizeof(float)>>>(xc.data_ptr<float>(), w.data_ptr<float>(),
        b.data_ptr<float>(), y.data_ptr<float>(), cols, (float)eps);
    return y;
}
"""


class ModelNew(nn.Module):
    def __init__(self, cols):
        super().__init__()
        self.ln = nn.LayerNorm(cols)
        self.ops = load_inline(name="fidelity_layernorm_rows",
                               cpp_sources="torch::Tensor layernorm(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps);",
                               cuda_sources=CUDA_SRC, functions=["layernorm"])

    def forward(self, x):
        return self.ops.layernorm(x, self.ln.weight, self.ln.bias, self.ln.eps)

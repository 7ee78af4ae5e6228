# task: mse_loss  language: cuda  device: cuda
# style: two CUDA extensions in one candidate: per-block partial sums, then a final reduce
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

partial_src = r"""
#include <torch/extension.h>

__global__ void sq_diff_partial_kernel(const float* a, const float* b, float* partial, long n) {
    __shared__ float red[256];
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    long stride = (long)gridDim.x * blockDim.x;
    float s = 0.0f;
    for (; i < n; i += stride) {
        float d = a[i] - b[i];
        s += d * d;
    }
    red[threadIdx.x] = s;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) red[threadIdx.x] += red[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = red[0];
}

torch::Tensor sq_diff_partial(torch::Tensor a, torch::Tensor b) {
    const int blocks = 1024;
    auto partial = torch::empty({blocks}, a.options());
    sq_diff_partial_kernel<<<blocks, 256>>>(a.data_ptr<float>(), b.data_ptr<float>(), partial.data_ptr<float>(), a.numel());
    return partial;
}
"""

final_src = r"""
#include <torch/extension.h>

__global__ void mean_of_partials_kernel(const float* partial, float* out, int m, float inv_n) {
    __shared__ float red[1024];
    float s = 0.0f;
    for (int i = threadIdx.x; i < m; i += blockDim.x) s += partial[i];
    red[threadIdx.x] = s;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) red[threadIdx.x] += red[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[0] = red[0] * inv_n;
}

torch::Tensor mean_of_partials(torch::Tensor partial, long n) {
    auto out = torch::empty({}, partial.options());
    mean_of_partials_kernel<<<1, 1024>>>(partial.data_ptr<float>(), out.data_ptr<float>(), partial.numel(), 1.0f / (float)n);
    return out;
}
"""

partial_ext = load_inline(name="fidelity_mse_partial", cpp_sources="torch::Tensor sq_diff_partial(torch::Tensor a, torch::Tensor b);",
                          cuda_sources=partial_src, functions=["sq_diff_partial"])
final_ext = load_inline(name="fidelity_mse_final", cpp_sources="torch::Tensor mean_of_partials(torch::Tensor partial, long n);",
                        cuda_sources=final_src, functions=["mean_of_partials"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        a = a.contiguous()
        b = b.contiguous()
        return final_ext.mean_of_partials(partial_ext.sq_diff_partial(a, b), a.numel())

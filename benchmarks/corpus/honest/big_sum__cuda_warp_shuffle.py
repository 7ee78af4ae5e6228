# task: big_sum  language: cuda  device: cuda
# style: CUDA load_inline, one block per row, warp-shuffle reduction
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

src = r"""
#include <torch/extension.h>

__global__ void row_sum_kernel(const float* __restrict__ x, float* __restrict__ out, int cols) {
    __shared__ float warp_sums[32];
    const float4* xr = reinterpret_cast<const float4*>(x + (long)blockIdx.x * cols);
    float s = 0.0f;
    for (int j = threadIdx.x; j < cols / 4; j += blockDim.x) {
        float4 v = xr[j];
        s += (v.x + v.y) + (v.z + v.w);
    }
    for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffff, s, off);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) warp_sums[warp] = s;
    __syncthreads();
    if (warp == 0) {
        s = lane < blockDim.x / 32 ? warp_sums[lane] : 0.0f;
        for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffff, s, off);
        if (lane == 0) out[blockIdx.x] = s;
    }
}

torch::Tensor row_sum(torch::Tensor x) {
    TORCH_CHECK(x.size(1) % 4 == 0, "columns must be a multiple of 4");
    auto xc = x.contiguous();
    auto out = torch::empty({xc.size(0)}, xc.options());
    row_sum_kernel<<<xc.size(0), 256>>>(xc.data_ptr<float>(), out.data_ptr<float>(), xc.size(1));
    return out;
}
"""

row_sum_ext = load_inline(name="fidelity_big_sum_rows", cpp_sources="torch::Tensor row_sum(torch::Tensor x);",
                          cuda_sources=src, functions=["row_sum"], extra_cuda_cflags=["-O3", "--use_fast_math"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return row_sum_ext.row_sum(x)

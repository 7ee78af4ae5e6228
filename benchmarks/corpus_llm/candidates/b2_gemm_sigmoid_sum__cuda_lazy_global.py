# task: builtin/level2/07_Gemm_Sigmoid_Sum.py  language: cuda  device: cuda
# style: load_inline on the first forward, cached in a module global; cuBLAS linear, then sigmoid and row sum in one kernel
# expect: ok
import math
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <math.h>

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    return v;
}
__device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, o));
    return v;
}
// every thread of the block gets the result; sh holds 32 floats
__device__ float block_sum(float v, float* sh) {
    int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    v = warp_sum(v);
    __syncthreads();
    if (lane == 0) sh[wid] = v;
    __syncthreads();
    int nw = (blockDim.x + 31) >> 5;
    v = (lane < nw) ? sh[lane] : 0.0f;
    return warp_sum(v);
}
__device__ float block_max(float v, float* sh) {
    int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    v = warp_max(v);
    __syncthreads();
    if (lane == 0) sh[wid] = v;
    __syncthreads();
    int nw = (blockDim.x + 31) >> 5;
    v = (lane < nw) ? sh[lane] : -INFINITY;
    return warp_max(v);
}

__global__ void b2_gemm_sigmoid_sum_cuda_lazy_global_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t cols) {
    __shared__ float sh[32];
    const float* xr = x + (int64_t)blockIdx.x * cols;
    float s = 0.0f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) s += 1.0f / (1.0f + expf(-xr[j]));
    s = block_sum(s, sh);
    if (threadIdx.x == 0) y[blockIdx.x] = s;
}

torch::Tensor sigmoid_row_sum(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "expects a float32 CUDA tensor");
    auto xc = x.contiguous();
    const int64_t cols = xc.size(-1);
    const int64_t rows = xc.numel() / cols;
    auto y = torch::empty({rows, 1}, xc.options());
    const int threads = 256;
    b2_gemm_sigmoid_sum_cuda_lazy_global_kernel<<<(unsigned int)rows, threads>>>(xc.data_ptr<float>(), y.data_ptr<float>(), cols);
    return y;
}
"""
_DECL = "torch::Tensor sigmoid_row_sum(torch::Tensor x);"
_EXT = None


def _get_ext():
    global _EXT
    if _EXT is None:
        _EXT = load_inline(name="b2_gemm_sigmoid_sum__cuda_lazy_global_ext", cpp_sources=_DECL, cuda_sources=_SRC, functions=["sigmoid_row_sum"], verbose=False)
    return _EXT


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)

    def forward(self, x):
        ext = _get_ext()
        return ext.sigmoid_row_sum(self.gemm(x))

# task: kernelbench/level1/40_LayerNorm.py  language: cuda  device: cuda
# style: several extensions, each built on first use; statistics and normalize extensions, loaded on the first forward
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

stats_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

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

// one block per row; a row is the whole normalized_shape (features*dim1*dim2 values)
__global__ void ln_stats_kernel_l(const float* __restrict__ x, float2* __restrict__ stats, int64_t cols, float eps) {
    __shared__ float sh[32];
    const float* xr = x + (int64_t)blockIdx.x * cols;
    float s = 0.0f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) s += xr[j];
    const float mean = block_sum(s, sh) / (float)cols;
    float v = 0.0f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) { float d = xr[j] - mean; v += d * d; }
    const float var = block_sum(v, sh) / (float)cols;
    if (threadIdx.x == 0) stats[blockIdx.x] = make_float2(mean, rsqrtf(var + eps));
}
torch::Tensor ln_stats(torch::Tensor x, int64_t rows, double eps) {
    auto xc = x.contiguous();
    int64_t cols = xc.numel() / rows;
    auto stats = torch::empty({rows, 2}, xc.options());
    ln_stats_kernel_l<<<(unsigned int)rows, 1024>>>(xc.data_ptr<float>(), reinterpret_cast<float2*>(stats.data_ptr<float>()), cols, (float)eps);
    return stats;
}
"""
stats_cpp = "torch::Tensor ln_stats(torch::Tensor x, int64_t rows, double eps);"

apply_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
__global__ void ln_apply_kernel_l(const float* __restrict__ x, const float2* __restrict__ stats, const float* __restrict__ w,
                                const float* __restrict__ b, float* __restrict__ y, int64_t cols, int64_t n) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)blockDim.x * gridDim.x) {
        int64_t row = i / cols, j = i % cols;
        float2 st = stats[row];
        y[i] = (x[i] - st.x) * st.y * w[j] + b[j];
    }
}
torch::Tensor ln_apply(torch::Tensor x, torch::Tensor stats, torch::Tensor w, torch::Tensor b) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    int64_t n = xc.numel();
    int64_t cols = w.numel();
    ln_apply_kernel_l<<<4096, 256>>>(xc.data_ptr<float>(), reinterpret_cast<const float2*>(stats.data_ptr<float>()),
                                   w.contiguous().data_ptr<float>(), b.contiguous().data_ptr<float>(), y.data_ptr<float>(), cols, n);
    return y;
}
"""
apply_cpp = "torch::Tensor ln_apply(torch::Tensor x, torch::Tensor stats, torch::Tensor w, torch::Tensor b);"

_EXTS = {}


def _ext(which):
    if which not in _EXTS:
        table = {
            "stats": ("kb1_40_layernorm__cuda_two_extensions_lazy_stats", stats_cpp, stats_source, ['ln_stats']),
            "apply": ("kb1_40_layernorm__cuda_two_extensions_lazy_apply", apply_cpp, apply_source, ['ln_apply']),
        }
        ext_name, cpp, cuda, fns = table[which]
        _EXTS[which] = load_inline(name=ext_name, cpp_sources=cpp, cuda_sources=cuda, functions=fns, verbose=False)
    return _EXTS[which]


class ModelNew(nn.Module):
    def __init__(self, normalized_shape: tuple):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x):
        rows = x.numel() // self.ln.weight.numel()
        row_stats = _ext("stats").ln_stats(x, rows, self.ln.eps)
        return _ext("apply").ln_apply(x, row_stats, self.ln.weight, self.ln.bias)

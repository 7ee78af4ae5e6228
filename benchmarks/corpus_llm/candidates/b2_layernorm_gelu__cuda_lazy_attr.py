# task: builtin/level2/04_LayerNorm_GELU.py  language: cuda  device: cuda
# style: load_inline on the first forward, cached on the module (attribute); LayerNorm and GELU fused in one row kernel
# expect: ok
import math
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <math.h>
__device__ __forceinline__ float gelu_erf(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)); }

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

__global__ void b2_layernorm_gelu_cuda_lazy_attr_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t cols, const float* __restrict__ w, const float* __restrict__ b, float eps) {
    __shared__ float sh[32];
    const float* xr = x + (int64_t)blockIdx.x * cols;
    float* yr = y + (int64_t)blockIdx.x * cols;
    float s = 0.0f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) s += xr[j];
    const float mean = block_sum(s, sh) / (float)cols;
    float v = 0.0f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) { float d = xr[j] - mean; v += d * d; }
    const float rstd = rsqrtf(block_sum(v, sh) / (float)cols + eps);
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
        float o = (xr[j] - mean) * rstd * w[j] + b[j];
        yr[j] = gelu_erf(o);
    }
}

torch::Tensor ln_gelu(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "expects a float32 CUDA tensor");
    auto xc = x.contiguous();
    const int64_t cols = xc.size(-1);
    const int64_t rows = xc.numel() / cols;
    auto y = torch::empty_like(xc);
    const int threads = 256;
    b2_layernorm_gelu_cuda_lazy_attr_kernel<<<(unsigned int)rows, threads>>>(xc.data_ptr<float>(), y.data_ptr<float>(), cols, w.data_ptr<float>(), b.data_ptr<float>(), (float)eps);
    return y;
}
"""
CPP_SRC = "torch::Tensor ln_gelu(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps);"


class ModelNew(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)
        self._ext = None

    def forward(self, x):
        if self._ext is None:
            self._ext = load_inline(name="b2_layernorm_gelu__cuda_lazy_attr_ext", cpp_sources=CPP_SRC, cuda_sources=CUDA_SRC, functions=["ln_gelu"])
        return self._ext.ln_gelu(x, self.norm.weight, self.norm.bias, self.norm.eps)

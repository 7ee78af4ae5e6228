# task: builtin/level2/08_Add_RMSNorm.py  language: cuda  device: cuda
# style: load_inline on the first forward inside try/except, torch fallback if it fails; residual add fused into the RMSNorm row kernel
# expect: ok
import math
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

_CUDA = r"""
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

__global__ void b2_add_rmsnorm_cuda_lazy_try_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t cols, const float* __restrict__ res, const float* __restrict__ w, float eps) {
    __shared__ float sh[32];
    const float* xr = x + (int64_t)blockIdx.x * cols;
    const float* rr = res + (int64_t)blockIdx.x * cols;
    float* yr = y + (int64_t)blockIdx.x * cols;
    float ss = 0.0f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) { float h = xr[j] + rr[j]; ss += h * h; }
    const float r = rsqrtf(block_sum(ss, sh) / (float)cols + eps);
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) yr[j] = (xr[j] + rr[j]) * r * w[j];
}

torch::Tensor add_rms_norm(torch::Tensor x, torch::Tensor residual, torch::Tensor w, double eps) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "expects a float32 CUDA tensor");
    auto xc = x.contiguous();
    const int64_t cols = xc.size(-1);
    const int64_t rows = xc.numel() / cols;
    auto y = torch::empty_like(xc);
    const int threads = 256;
    b2_add_rmsnorm_cuda_lazy_try_kernel<<<(unsigned int)rows, threads>>>(xc.data_ptr<float>(), y.data_ptr<float>(), cols, residual.contiguous().data_ptr<float>(), w.data_ptr<float>(), (float)eps);
    return y;
}
"""
_CPP = "torch::Tensor add_rms_norm(torch::Tensor x, torch::Tensor residual, torch::Tensor w, double eps);"


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(hidden))
        self._ext = None
        self._ext_failed = False

    def forward(self, x, residual):
        if self._ext is None and not self._ext_failed:
            try:
                self._ext = load_inline(name="b2_add_rmsnorm__cuda_lazy_try_ext", cpp_sources=_CPP, cuda_sources=_CUDA, functions=["add_rms_norm"], verbose=False)
            except Exception as exc:  # no compiler: stay on the torch path
                print(f"custom kernel unavailable, using torch: {exc}")
                self._ext_failed = True
        if self._ext is not None and x.is_cuda:
            return self._ext.add_rms_norm(x, residual, self.weight, self.eps)
        h = x + residual
        return h * torch.rsqrt(h.pow(2).mean(dim=-1, keepdim=True) + self.eps) * self.weight

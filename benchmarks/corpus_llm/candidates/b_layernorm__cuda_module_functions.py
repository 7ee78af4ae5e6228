# task: builtin/level1/20_LayerNorm.py  language: cuda  device: cuda
# style: module-level load_inline with functions=[...]; two-pass mean/variance, 256 threads per row
# expect: ok
import math
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
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

__global__ void b_layernorm_cuda_module_functions_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t cols, const float* __restrict__ w, const float* __restrict__ b, float eps) {
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
        yr[j] = o;
    }
}

torch::Tensor layer_norm_fwd(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "expects a float32 CUDA tensor");
    auto xc = x.contiguous();
    const int64_t cols = xc.size(-1);
    const int64_t rows = xc.numel() / cols;
    auto y = torch::empty_like(xc);
    const int threads = 256;
    b_layernorm_cuda_module_functions_kernel<<<(unsigned int)rows, threads>>>(xc.data_ptr<float>(), y.data_ptr<float>(), cols, w.data_ptr<float>(), b.data_ptr<float>(), (float)eps);
    return y;
}
"""

cpp_src = "torch::Tensor layer_norm_fwd(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps);"

b_layernorm__cuda_module_functions_op = load_inline(
    name="b_layernorm__cuda_module_functions_ext",
    cpp_sources=cpp_src,
    cuda_sources=cuda_src,
    functions=["layer_norm_fwd"],
    verbose=False,
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.norm = nn.LayerNorm(hidden, eps=1e-5)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        return b_layernorm__cuda_module_functions_op.layer_norm_fwd(x, self.norm.weight, self.norm.bias, self.norm.eps)

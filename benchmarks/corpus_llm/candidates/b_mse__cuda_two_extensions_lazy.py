# task: builtin/level1/26_MSELoss.py  language: cuda  device: cuda
# style: several extensions, each built on first use; partial sums then final mean, both extensions loaded lazily from a dict cache
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

partial_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
__global__ void sqd_kernel_l(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ partial, int64_t n) {
    __shared__ float sh[256];
    float acc = 0.0f;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)blockDim.x * gridDim.x) {
        float d = a[i] - b[i];
        acc += d * d;
    }
    sh[threadIdx.x] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = sh[0];
}
torch::Tensor sqdiff_partial(torch::Tensor a, torch::Tensor b) {
    auto ac = a.contiguous();
    auto bc = b.contiguous();
    const int blocks = 1024;
    auto partial = torch::empty({blocks}, ac.options());
    sqd_kernel_l<<<blocks, 256>>>(ac.data_ptr<float>(), bc.data_ptr<float>(), partial.data_ptr<float>(), ac.numel());
    return partial;
}
"""
partial_cpp = "torch::Tensor sqdiff_partial(torch::Tensor a, torch::Tensor b);"

final_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
__global__ void finish_kernel_l(const float* __restrict__ partial, float* __restrict__ out, int n_partial, double count) {
    __shared__ double sh[1024];
    double acc = 0.0;
    for (int i = threadIdx.x; i < n_partial; i += blockDim.x) acc += (double)partial[i];
    sh[threadIdx.x] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[0] = (float)(sh[0] / count);
}
torch::Tensor finish_mean(torch::Tensor partial, int64_t count) {
    auto out = torch::empty({}, partial.options());
    finish_kernel_l<<<1, 1024>>>(partial.data_ptr<float>(), out.data_ptr<float>(), (int)partial.numel(), (double)count);
    return out;
}
"""
final_cpp = "torch::Tensor finish_mean(torch::Tensor partial, int64_t count);"

_EXTS = {}


def _ext(which):
    if which not in _EXTS:
        table = {
            "partial": ("b_mse__cuda_two_extensions_lazy_partial", partial_cpp, partial_source, ['sqdiff_partial']),
            "final": ("b_mse__cuda_two_extensions_lazy_final", final_cpp, final_source, ['finish_mean']),
        }
        ext_name, cpp, cuda, fns = table[which]
        _EXTS[which] = load_inline(name=ext_name, cpp_sources=cpp, cuda_sources=cuda, functions=fns, verbose=False)
    return _EXTS[which]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        sums = _ext("partial").sqdiff_partial(predictions, targets)
        return _ext("final").finish_mean(sums, predictions.numel())

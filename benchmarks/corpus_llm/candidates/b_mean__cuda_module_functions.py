# task: builtin/level1/09_Mean.py  language: cuda  device: cuda
# style: module-level load_inline with functions=[...]; one thread per output column, loop over the reduced dim
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

// x: (B, S, H) contiguous -> out (B, H); one thread per (b, h), coalesced over h
__global__ void mean_dim1_kernel_cuda_module_functions(const float* __restrict__ x, float* __restrict__ out, int64_t S, int64_t H, int64_t total) {
    int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= total) return;
    int64_t b = idx / H, h = idx % H;
    const float* p = x + b * S * H + h;
    float acc = 0.0f;
    for (int64_t s = 0; s < S; ++s) acc += p[s * H];
    out[idx] = acc / (float)S;
}

torch::Tensor mean_dim1(torch::Tensor x) {
    TORCH_CHECK(x.dim() == 3, "expects (B, S, H)");
    auto xc = x.contiguous();
    int64_t B = xc.size(0), S = xc.size(1), H = xc.size(2);
    auto out = torch::empty({B, H}, xc.options());
    int64_t total = B * H;
    const int threads = 256;
    mean_dim1_kernel_cuda_module_functions<<<(unsigned int)((total + threads - 1) / threads), threads>>>(xc.data_ptr<float>(), out.data_ptr<float>(), S, H, total);
    return out;
}
"""

cpp_src = "torch::Tensor mean_dim1(torch::Tensor x);"

b_mean__cuda_module_functions_op = load_inline(
    name="b_mean__cuda_module_functions_ext",
    cpp_sources=cpp_src,
    cuda_sources=cuda_src,
    functions=["mean_dim1"],
    verbose=False,
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return b_mean__cuda_module_functions_op.mean_dim1(x)

# task: builtin/level1/01_ReLU.py  language: cuda  device: cuda
# style: load_inline on the first forward, cached in a module global; grid-stride loop
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void b_relu_cuda_lazy_global_kernel(const float* __restrict__ y_in, float* __restrict__ y_out, int64_t n) {
    int64_t stride = (int64_t)blockDim.x * gridDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float v = y_in[i];
        y_out[i] = fmaxf(v, 0.0f);
    }
}

torch::Tensor relu_forward(torch::Tensor y_in_) {
    TORCH_CHECK(y_in_.is_cuda(), "input must be a CUDA tensor");
    TORCH_CHECK(y_in_.scalar_type() == torch::kFloat32, "float32 only");
    auto y_t = y_in_.contiguous();
    auto out = torch::empty_like(y_t);
    int64_t n = y_t.numel();
    const int threads = 256;
    if (n == 0) return out;
    auto y = y_t;
    b_relu_cuda_lazy_global_kernel<<<(unsigned int)std::min<int64_t>((n + threads - 1) / threads, 4096), threads>>>(y_t.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}
"""
_DECL = "torch::Tensor relu_forward(torch::Tensor y_in_);"
_EXT = None


def _get_ext():
    global _EXT
    if _EXT is None:
        _EXT = load_inline(name="b_relu__cuda_lazy_global_ext", cpp_sources=_DECL, cuda_sources=_SRC, functions=["relu_forward"], verbose=False)
    return _EXT


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        ext = _get_ext()
        return ext.relu_forward(x)

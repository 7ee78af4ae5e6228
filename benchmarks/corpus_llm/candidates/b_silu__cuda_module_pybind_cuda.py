# task: builtin/level1/04_SiLU.py  language: cuda  device: cuda
# style: module-level load_inline, hand-written PYBIND11_MODULE in cuda_sources; grid-stride loop
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

b_silu__cuda_module_pybind_cuda_cuda_src = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void b_silu_cuda_module_pybind_cuda_kernel(const float* __restrict__ y_in, float* __restrict__ y_out, int64_t n) {
    int64_t stride = (int64_t)blockDim.x * gridDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float v = y_in[i];
        y_out[i] = v / (1.0f + expf(-v));
    }
}

torch::Tensor swish_cuda(torch::Tensor y_in_) {
    TORCH_CHECK(y_in_.is_cuda(), "input must be a CUDA tensor");
    TORCH_CHECK(y_in_.scalar_type() == torch::kFloat32, "float32 only");
    auto y_t = y_in_.contiguous();
    auto out = torch::empty_like(y_t);
    int64_t n = y_t.numel();
    const int threads = 256;
    if (n == 0) return out;
    auto y = y_t;
    b_silu_cuda_module_pybind_cuda_kernel<<<(unsigned int)std::min<int64_t>((n + threads - 1) / threads, 4096), threads>>>(y_t.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("swish_cuda", &swish_cuda, "swish_cuda (CUDA)");
}
"""

b_silu__cuda_module_pybind_cuda_module = load_inline(
    name="b_silu__cuda_module_pybind_cuda_ext",
    cpp_sources="",
    cuda_sources=b_silu__cuda_module_pybind_cuda_cuda_src,
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return b_silu__cuda_module_pybind_cuda_module.swish_cuda(x)

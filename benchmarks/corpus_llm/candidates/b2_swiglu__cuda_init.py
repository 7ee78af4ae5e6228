# task: builtin/level2/09_SwiGLU.py  language: cuda  device: cuda
# style: load_inline inside __init__ (sources at module level), kept on self; grid-stride loop
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

KERNEL_SOURCE = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void b2_swiglu_cuda_init_kernel(const float* __restrict__ y_in, float* __restrict__ y_out, int64_t n, const float* __restrict__ res) {
    int64_t stride = (int64_t)blockDim.x * gridDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float v = y_in[i]; float r = res[i];
        y_out[i] = (v / (1.0f + expf(-v))) * r;
    }
}

torch::Tensor fused_epilogue(torch::Tensor y_in_, torch::Tensor r) {
    TORCH_CHECK(y_in_.is_cuda(), "input must be a CUDA tensor");
    TORCH_CHECK(y_in_.scalar_type() == torch::kFloat32, "float32 only");
    auto y_t = y_in_.contiguous();
    auto rc = r.contiguous();
    auto out = torch::empty_like(y_t);
    int64_t n = y_t.numel();
    const int threads = 256;
    if (n == 0) return out;
    auto y = y_t;
    b2_swiglu_cuda_init_kernel<<<(unsigned int)std::min<int64_t>((n + threads - 1) / threads, 4096), threads>>>(y_t.data_ptr<float>(), out.data_ptr<float>(), n, rc.data_ptr<float>());
    return out;
}
"""

KERNEL_DECL = "torch::Tensor fused_epilogue(torch::Tensor y_in_, torch::Tensor r);"


class ModelNew(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)
        self.kernels = load_inline(name="b2_swiglu__cuda_init_ext", cpp_sources=KERNEL_DECL, cuda_sources=KERNEL_SOURCE, functions=["fused_epilogue"], verbose=False)

    def forward(self, x):
        y = self.gate(x)
        return self.kernels.fused_epilogue(y, self.up(x))

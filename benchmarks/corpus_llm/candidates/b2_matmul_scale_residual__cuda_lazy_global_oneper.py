# task: builtin/level2/03_Matmul_Scale_Residual.py  language: cuda  device: cuda
# style: load_inline on the first forward, cached in a module global; one element per thread
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void b2_matmul_scale_residual_cuda_lazy_global_oneper_kernel(const float* __restrict__ y_in, float* __restrict__ y_out, int64_t n, const float* __restrict__ res, float scale) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = y_in[i]; float r = res[i];
        y_out[i] = r + v * scale;
    }
}

torch::Tensor fused_epilogue(torch::Tensor y_in_, torch::Tensor r, double scale) {
    TORCH_CHECK(y_in_.is_cuda(), "input must be a CUDA tensor");
    TORCH_CHECK(y_in_.scalar_type() == torch::kFloat32, "float32 only");
    auto y_t = y_in_.contiguous();
    auto rc = r.contiguous();
    auto out = torch::empty_like(y_t);
    int64_t n = y_t.numel();
    const int threads = 256;
    if (n == 0) return out;
    auto y = y_t;
    b2_matmul_scale_residual_cuda_lazy_global_oneper_kernel<<<(unsigned int)((n + threads - 1) / threads), threads>>>(y_t.data_ptr<float>(), out.data_ptr<float>(), n, rc.data_ptr<float>(), (float)scale);
    return out;
}
"""
_DECL = "torch::Tensor fused_epilogue(torch::Tensor y_in_, torch::Tensor r, double scale);"
_EXT = None


def _get_ext():
    global _EXT
    if _EXT is None:
        _EXT = load_inline(name="b2_matmul_scale_residual__cuda_lazy_global_oneper_ext", cpp_sources=_DECL, cuda_sources=_SRC, functions=["fused_epilogue"], verbose=False)
    return _EXT


class ModelNew(nn.Module):
    def __init__(self, dim: int, scale: float):
        super().__init__()
        self.proj = nn.Linear(dim, dim, bias=False)
        self.scale = scale

    def forward(self, x):
        ext = _get_ext()
        y = self.proj(x)
        return ext.fused_epilogue(y, x, self.scale)

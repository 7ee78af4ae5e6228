# task: kernelbench/level2/40_Matmul_Scaling_ResidualAdd.py  language: cuda  device: cuda
# style: module-level load_inline inside try/except with a torch fallback; epilogue written in place into the GEMM/conv output
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void kb2_40_matmul_scale_res_cuda_module_try_inplace_kernel(const float* __restrict__ y_in, float* __restrict__ y_out, int64_t n, float scale) {
    int64_t stride = (int64_t)blockDim.x * gridDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float v = y_in[i];
        y_out[i] = v * scale + v;
    }
}

torch::Tensor fused_epilogue(torch::Tensor y_in_, double scale) {
    TORCH_CHECK(y_in_.is_cuda(), "input must be a CUDA tensor");
    TORCH_CHECK(y_in_.scalar_type() == torch::kFloat32, "float32 only");
    auto y_t = y_in_.contiguous();
    auto out = y_t;
    int64_t n = y_t.numel();
    const int threads = 256;
    if (n == 0) return out;
    auto y = y_t;
    kb2_40_matmul_scale_res_cuda_module_try_inplace_kernel<<<(unsigned int)std::min<int64_t>((n + threads - 1) / threads, 4096), threads>>>(y_t.data_ptr<float>(), out.data_ptr<float>(), n, (float)scale);
    return out;
}
"""

try:
    _ext = load_inline(
        name="kb2_40_matmul_scale_res__cuda_module_try_inplace_ext",
        cpp_sources=["torch::Tensor fused_epilogue(torch::Tensor y_in_, double scale);"],
        cuda_sources=[source],
        functions=["fused_epilogue"],
        verbose=False,
    )
except Exception as e:  # pragma: no cover - fall back to PyTorch when the build fails
    print("falling back to PyTorch:", e)
    _ext = None


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        if _ext is not None and x.is_cuda:
            y = self.matmul(x)
            return _ext.fused_epilogue(y, self.scaling_factor)
        y = self.matmul(x)
        return y * self.scaling_factor + y

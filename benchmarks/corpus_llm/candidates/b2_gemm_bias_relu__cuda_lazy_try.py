# task: builtin/level2/01_Gemm_Bias_ReLU.py  language: cuda  device: cuda
# style: load_inline on the first forward inside try/except, torch fallback if it fails; grid-stride loop
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

_CUDA = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void b2_gemm_bias_relu_cuda_lazy_try_kernel(const float* __restrict__ y_in, float* __restrict__ y_out, int64_t n) {
    int64_t stride = (int64_t)blockDim.x * gridDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float v = y_in[i];
        y_out[i] = fmaxf(v, 0.0f);
    }
}

torch::Tensor fused_epilogue(torch::Tensor y_in_) {
    TORCH_CHECK(y_in_.is_cuda(), "input must be a CUDA tensor");
    TORCH_CHECK(y_in_.scalar_type() == torch::kFloat32, "float32 only");
    auto y_t = y_in_.contiguous();
    auto out = torch::empty_like(y_t);
    int64_t n = y_t.numel();
    const int threads = 256;
    if (n == 0) return out;
    auto y = y_t;
    b2_gemm_bias_relu_cuda_lazy_try_kernel<<<(unsigned int)std::min<int64_t>((n + threads - 1) / threads, 4096), threads>>>(y_t.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}
"""
_CPP = "torch::Tensor fused_epilogue(torch::Tensor y_in_);"


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self._ext = None
        self._ext_failed = False

    def forward(self, x):
        if self._ext is None and not self._ext_failed:
            try:
                self._ext = load_inline(name="b2_gemm_bias_relu__cuda_lazy_try_ext", cpp_sources=_CPP, cuda_sources=_CUDA, functions=["fused_epilogue"], verbose=False)
            except Exception as exc:  # no compiler: stay on the torch path
                print(f"custom kernel unavailable, using torch: {exc}")
                self._ext_failed = True
        if self._ext is not None and x.is_cuda:
            y = self.gemm(x)
            return self._ext.fused_epilogue(y)
        y = self.gemm(x)
        return torch.relu(y)

# task: builtin/level1/05_LeakyReLU.py  language: cuda  device: cuda
# style: load_inline on the first forward inside try/except, torch fallback if it fails; one element per thread
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

_CUDA = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void b_leakyrelu_cuda_lazy_try_oneper_kernel(const float* __restrict__ y_in, float* __restrict__ y_out, int64_t n, float slope) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = y_in[i];
        y_out[i] = v > 0.0f ? v : v * slope;
    }
}

torch::Tensor leaky_forward(torch::Tensor y_in_, double slope) {
    TORCH_CHECK(y_in_.is_cuda(), "input must be a CUDA tensor");
    TORCH_CHECK(y_in_.scalar_type() == torch::kFloat32, "float32 only");
    auto y_t = y_in_.contiguous();
    auto out = torch::empty_like(y_t);
    int64_t n = y_t.numel();
    const int threads = 256;
    if (n == 0) return out;
    auto y = y_t;
    b_leakyrelu_cuda_lazy_try_oneper_kernel<<<(unsigned int)((n + threads - 1) / threads), threads>>>(y_t.data_ptr<float>(), out.data_ptr<float>(), n, (float)slope);
    return out;
}
"""
_CPP = "torch::Tensor leaky_forward(torch::Tensor y_in_, double slope);"


class ModelNew(nn.Module):
    def __init__(self, negative_slope: float):
        super().__init__()
        self.negative_slope = negative_slope
        self._ext = None
        self._ext_failed = False

    def forward(self, x):
        if self._ext is None and not self._ext_failed:
            try:
                self._ext = load_inline(name="b_leakyrelu__cuda_lazy_try_oneper_ext", cpp_sources=_CPP, cuda_sources=_CUDA, functions=["leaky_forward"], verbose=False)
            except Exception as exc:  # no compiler: stay on the torch path
                print(f"custom kernel unavailable, using torch: {exc}")
                self._ext_failed = True
        if self._ext is not None and x.is_cuda:
            return self._ext.leaky_forward(x, self.negative_slope)
        return F.leaky_relu(x, negative_slope=self.negative_slope)

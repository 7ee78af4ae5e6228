# task: clamp_scale  language: cuda  device: cuda
# style: CUDA compiled-kernel cache kept on the module, built on the first forward
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CUDA = r"""
#include <torch/extension.h>

__global__ void clamp_scale_kernel(const float* x, float* y, float lo, float hi, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = fminf(fmaxf(x[i], lo), hi) * s;
    }
}

torch::Tensor clamp_scale(torch::Tensor x, double lo, double hi, double s) {
    auto y = torch::empty_like(x);
    int n = x.numel();
    clamp_scale_kernel<<<(n + 511) / 512, 512>>>(x.data_ptr<float>(), y.data_ptr<float>(), (float)lo, (float)hi, (float)s, n);
    return y;
}
"""
_CPP = "torch::Tensor clamp_scale(torch::Tensor x, double lo, double hi, double s);"


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._kernel = None

    def _get_kernel(self):
        if self._kernel is None:
            self._kernel = load_inline(name="fidelity_clamp_scale_lazy", cpp_sources=_CPP, cuda_sources=_CUDA,
                                       functions=["clamp_scale"], verbose=False)
        return self._kernel

    def forward(self, x):
        return self._get_kernel().clamp_scale(x.contiguous(), -1.0, 1.0, 3.0)

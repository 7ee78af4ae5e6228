# task: relu_64k  language: cpp  device: cpu
# style: C++ via load_inline (cpp_sources only), a flat loop the compiler vectorises
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <torch/extension.h>

torch::Tensor relu_cpu(torch::Tensor x) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "expected float32");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const float* src = xc.data_ptr<float>();
    float* dst = y.data_ptr<float>();
    const int64_t n = xc.numel();
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i] > 0.0f ? src[i] : 0.0f;
    return y;
}
"""

relu_ext = load_inline(name="fidelity_relu_cpp", cpp_sources=cpp_source, functions=["relu_cpu"],
                       extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return relu_ext.relu_cpu(x)

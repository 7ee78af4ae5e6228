# task: scale_add  language: cpp  device: cpu
# style: C++ via load_inline built in __init__, fused a*alpha+b loop
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>

torch::Tensor scale_add(torch::Tensor a, torch::Tensor b, double alpha) {
    auto ac = a.contiguous();
    auto bc = b.contiguous();
    auto out = torch::empty_like(ac);
    const float* pa = ac.data_ptr<float>();
    const float* pb = bc.data_ptr<float>();
    float* po = out.data_ptr<float>();
    const float s = (float)alpha;
    const int64_t n = ac.numel();
    for (int64_t i = 0; i < n; ++i) po[i] = s * pa[i] + pb[i];
    return out;
}
"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ext = load_inline(name="fidelity_scale_add_cpp", cpp_sources=SRC, functions=["scale_add"],
                               extra_cflags=["-O3"])

    def forward(self, a, b):
        return self.ext.scale_add(a, b, 2.0)

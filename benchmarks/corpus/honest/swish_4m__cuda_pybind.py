# task: swish_4m  language: cuda  device: cuda
# style: CUDA with a hand-written PYBIND11_MODULE binding (no functions= list)
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>

__global__ void swish_kernel(const float* __restrict__ x, float* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = v / (1.0f + __expf(-v));
    }
}

torch::Tensor swish_forward(torch::Tensor x) {
    TORCH_CHECK(x.is_contiguous(), "x must be contiguous");
    auto y = torch::empty_like(x);
    int n = x.numel();
    const int block = 256;
    swish_kernel<<<(n + block - 1) / block, block>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""

cpp_src = r"""
#include <torch/extension.h>
torch::Tensor swish_forward(torch::Tensor x);

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("swish_forward", &swish_forward, "x * sigmoid(x) (CUDA)");
}
"""

swish = load_inline(name="fidelity_swish_pybind", cpp_sources=cpp_src, cuda_sources=cuda_src,
                    extra_cuda_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return swish.swish_forward(x.contiguous())

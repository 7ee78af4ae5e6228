# task: builtin/level1/05_LeakyReLU.py  language: cuda  device: cuda
# style: module-level load_inline with functions=[...]; the negative slope hard-coded to 0.01 instead of the task's
# expect: incorrect
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void b_leakyrelu_wrong_slope_kernel(const float* __restrict__ y_in, float* __restrict__ y_out, int64_t n) {
    int64_t stride = (int64_t)blockDim.x * gridDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float v = y_in[i];
        y_out[i] = v > 0.0f ? v : v * 0.01f;
    }
}

torch::Tensor leaky_forward(torch::Tensor y_in_) {
    TORCH_CHECK(y_in_.is_cuda(), "input must be a CUDA tensor");
    TORCH_CHECK(y_in_.scalar_type() == torch::kFloat32, "float32 only");
    auto y_t = y_in_.contiguous();
    auto out = torch::empty_like(y_t);
    int64_t n = y_t.numel();
    const int threads = 256;
    if (n == 0) return out;
    auto y = y_t;
    b_leakyrelu_wrong_slope_kernel<<<(unsigned int)std::min<int64_t>((n + threads - 1) / threads, 4096), threads>>>(y_t.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}
"""

cpp_src = "torch::Tensor leaky_forward(torch::Tensor y_in_);"

b_leakyrelu__cuda_wrong_slope_op = load_inline(
    name="b_leakyrelu__cuda_wrong_slope_ext",
    cpp_sources=cpp_src,
    cuda_sources=cuda_src,
    functions=["leaky_forward"],
    verbose=False,
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, negative_slope: float):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x):
        return b_leakyrelu__cuda_wrong_slope_op.leaky_forward(x)

# task: kernelbench/level2/57_Conv2d_ReLU_HardSwish.py  language: cuda  device: cuda
# style: module-level load_inline with functions=[...]; grid-stride loop
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void kb2_57_conv_relu_hardswish_cuda_module_functions_kernel(const float* __restrict__ y_in, float* __restrict__ y_out, int64_t n) {
    int64_t stride = (int64_t)blockDim.x * gridDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float v = y_in[i];
        y_out[i] = fmaxf(v, 0.0f) * fminf(fmaxf((fmaxf(v, 0.0f) + 3.0f) / 6.0f, 0.0f), 1.0f);
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
    kb2_57_conv_relu_hardswish_cuda_module_functions_kernel<<<(unsigned int)std::min<int64_t>((n + threads - 1) / threads, 4096), threads>>>(y_t.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}
"""

cpp_src = "torch::Tensor fused_epilogue(torch::Tensor y_in_);"

kb2_57_conv_relu_hardswish__cuda_module_functions_op = load_inline(
    name="kb2_57_conv_relu_hardswish__cuda_module_functions_ext",
    cpp_sources=cpp_src,
    cuda_sources=cuda_src,
    functions=["fused_epilogue"],
    verbose=False,
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        y = self.conv(x)
        return kb2_57_conv_relu_hardswish__cuda_module_functions_op.fused_epilogue(y)

# task: kernelbench/level2/69_Conv2d_HardSwish_ReLU.py  language: cuda  device: cuda
# style: module-level load_inline, hand-written PYBIND11_MODULE in cuda_sources; epilogue written in place into the GEMM/conv output
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

kb2_69_conv_hardswish_relu__cuda_module_pybind_cuda_inplace_cuda_src = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__device__ __forceinline__ float hardswishf_(float x) { return x * fminf(fmaxf(x + 3.0f, 0.0f), 6.0f) / 6.0f; }

__global__ void kb2_69_conv_hardswish_relu_cuda_module_pybind_cuda_inplace_kernel(const float* __restrict__ y_in, float* __restrict__ y_out, int64_t n) {
    int64_t stride = (int64_t)blockDim.x * gridDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float v = y_in[i];
        y_out[i] = fmaxf(hardswishf_(v), 0.0f);
    }
}

torch::Tensor fused_epilogue(torch::Tensor y_in_) {
    TORCH_CHECK(y_in_.is_cuda(), "input must be a CUDA tensor");
    TORCH_CHECK(y_in_.scalar_type() == torch::kFloat32, "float32 only");
    auto y_t = y_in_.contiguous();
    auto out = y_t;
    int64_t n = y_t.numel();
    const int threads = 256;
    if (n == 0) return out;
    auto y = y_t;
    kb2_69_conv_hardswish_relu_cuda_module_pybind_cuda_inplace_kernel<<<(unsigned int)std::min<int64_t>((n + threads - 1) / threads, 4096), threads>>>(y_t.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("fused_epilogue", &fused_epilogue, "fused_epilogue (CUDA)");
}
"""

kb2_69_conv_hardswish_relu__cuda_module_pybind_cuda_inplace_module = load_inline(
    name="kb2_69_conv_hardswish_relu__cuda_module_pybind_cuda_inplace_ext",
    cpp_sources="",
    cuda_sources=kb2_69_conv_hardswish_relu__cuda_module_pybind_cuda_inplace_cuda_src,
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        y = self.conv(x)
        return kb2_69_conv_hardswish_relu__cuda_module_pybind_cuda_inplace_module.fused_epilogue(y)

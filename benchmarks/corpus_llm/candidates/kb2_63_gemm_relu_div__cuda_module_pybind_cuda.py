# task: kernelbench/level2/63_Gemm_ReLU_Divide.py  language: cuda  device: cuda
# style: module-level load_inline, hand-written PYBIND11_MODULE in cuda_sources; grid-stride loop
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

kb2_63_gemm_relu_div__cuda_module_pybind_cuda_cuda_src = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void kb2_63_gemm_relu_div_cuda_module_pybind_cuda_kernel(const float* __restrict__ y_in, float* __restrict__ y_out, int64_t n, float divisor) {
    int64_t stride = (int64_t)blockDim.x * gridDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float v = y_in[i];
        y_out[i] = fmaxf(v, 0.0f) / divisor;
    }
}

torch::Tensor fused_epilogue(torch::Tensor y_in_, double divisor) {
    TORCH_CHECK(y_in_.is_cuda(), "input must be a CUDA tensor");
    TORCH_CHECK(y_in_.scalar_type() == torch::kFloat32, "float32 only");
    auto y_t = y_in_.contiguous();
    auto out = torch::empty_like(y_t);
    int64_t n = y_t.numel();
    const int threads = 256;
    if (n == 0) return out;
    auto y = y_t;
    kb2_63_gemm_relu_div_cuda_module_pybind_cuda_kernel<<<(unsigned int)std::min<int64_t>((n + threads - 1) / threads, 4096), threads>>>(y_t.data_ptr<float>(), out.data_ptr<float>(), n, (float)divisor);
    return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("fused_epilogue", &fused_epilogue, "fused_epilogue (CUDA)");
}
"""

kb2_63_gemm_relu_div__cuda_module_pybind_cuda_module = load_inline(
    name="kb2_63_gemm_relu_div__cuda_module_pybind_cuda_ext",
    cpp_sources="",
    cuda_sources=kb2_63_gemm_relu_div__cuda_module_pybind_cuda_cuda_src,
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, divisor):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.divisor = divisor

    def forward(self, x):
        y = self.linear(x)
        return kb2_63_gemm_relu_div__cuda_module_pybind_cuda_module.fused_epilogue(y, self.divisor)

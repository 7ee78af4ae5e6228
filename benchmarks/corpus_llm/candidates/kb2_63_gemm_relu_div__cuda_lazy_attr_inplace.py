# task: kernelbench/level2/63_Gemm_ReLU_Divide.py  language: cuda  device: cuda
# style: load_inline on the first forward, cached on the module (attribute); epilogue written in place into the GEMM/conv output
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void kb2_63_gemm_relu_div_cuda_lazy_attr_inplace_kernel(const float* __restrict__ y_in, float* __restrict__ y_out, int64_t n, float divisor) {
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
    auto out = y_t;
    int64_t n = y_t.numel();
    const int threads = 256;
    if (n == 0) return out;
    auto y = y_t;
    kb2_63_gemm_relu_div_cuda_lazy_attr_inplace_kernel<<<(unsigned int)std::min<int64_t>((n + threads - 1) / threads, 4096), threads>>>(y_t.data_ptr<float>(), out.data_ptr<float>(), n, (float)divisor);
    return out;
}
"""
CPP_SRC = "torch::Tensor fused_epilogue(torch::Tensor y_in_, double divisor);"


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, divisor):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.divisor = divisor
        self._ext = None

    def forward(self, x):
        if self._ext is None:
            self._ext = load_inline(name="kb2_63_gemm_relu_div__cuda_lazy_attr_inplace_ext", cpp_sources=CPP_SRC, cuda_sources=CUDA_SRC, functions=["fused_epilogue"])
        y = self.linear(x)
        return self._ext.fused_epilogue(y, self.divisor)

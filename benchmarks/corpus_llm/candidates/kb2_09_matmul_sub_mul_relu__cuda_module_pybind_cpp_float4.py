# task: kernelbench/level2/9_Matmul_Subtract_Multiply_ReLU.py  language: cuda  device: cuda
# style: module-level load_inline, declarations and PYBIND11_MODULE in cpp_sources; float4 loads with a scalar tail
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__device__ __forceinline__ float kb2_09_matmul_sub_mul_relu_cuda_module_pybind_cpp_float4_op(float v, float sub, float mul) {
    return fmaxf((v - sub) * mul, 0.0f);
}

__global__ void kb2_09_matmul_sub_mul_relu_cuda_module_pybind_cpp_float4_kernel_vec4(const float4* __restrict__ x4, float4* __restrict__ y4, int64_t n4, float sub, float mul) {
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 a = x4[i];
        float4 b;
        b.x = kb2_09_matmul_sub_mul_relu_cuda_module_pybind_cpp_float4_op(a.x, sub, mul);
        b.y = kb2_09_matmul_sub_mul_relu_cuda_module_pybind_cpp_float4_op(a.y, sub, mul);
        b.z = kb2_09_matmul_sub_mul_relu_cuda_module_pybind_cpp_float4_op(a.z, sub, mul);
        b.w = kb2_09_matmul_sub_mul_relu_cuda_module_pybind_cpp_float4_op(a.w, sub, mul);
        y4[i] = b;
    }
}

__global__ void kb2_09_matmul_sub_mul_relu_cuda_module_pybind_cpp_float4_kernel_tail(const float* __restrict__ x, float* __restrict__ y, int64_t start, int64_t n, float sub, float mul) {
    int64_t i = start + (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = kb2_09_matmul_sub_mul_relu_cuda_module_pybind_cpp_float4_op(x[i], sub, mul);
}

torch::Tensor fused_epilogue(torch::Tensor y_in_, double sub, double mul) {
    TORCH_CHECK(y_in_.is_cuda(), "input must be a CUDA tensor");
    TORCH_CHECK(y_in_.scalar_type() == torch::kFloat32, "float32 only");
    auto y_t = y_in_.contiguous();
    auto out = torch::empty_like(y_t);
    int64_t n = y_t.numel();
    int64_t n4 = n / 4;
    const int threads = 256;
    if (n4 > 0) {
        int64_t blocks = (n4 + threads - 1) / threads;
        kb2_09_matmul_sub_mul_relu_cuda_module_pybind_cpp_float4_kernel_vec4<<<(unsigned int)blocks, threads>>>(
            reinterpret_cast<const float4*>(y_t.data_ptr<float>()), reinterpret_cast<float4*>(out.data_ptr<float>()), n4, (float)sub, (float)mul);
    }
    int64_t rem = n - n4 * 4;
    if (rem > 0) {
        kb2_09_matmul_sub_mul_relu_cuda_module_pybind_cpp_float4_kernel_tail<<<1, 256>>>(y_t.data_ptr<float>(), out.data_ptr<float>(), n4 * 4, n, (float)sub, (float)mul);
    }
    return out;
}
"""

cpp_source = r"""
torch::Tensor fused_epilogue(torch::Tensor y_in_, double sub, double mul);

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("fused_epilogue", &fused_epilogue, "fused fused_epilogue");
}
"""

fused = load_inline(
    name="kb2_09_matmul_sub_mul_relu__cuda_module_pybind_cpp_float4_ext",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    extra_cuda_cflags=["-O3"],
)


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, subtract_value, multiply_value):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.subtract_value = subtract_value
        self.multiply_value = multiply_value

    def forward(self, x):
        y = self.linear(x)
        return fused.fused_epilogue(y, self.subtract_value, self.multiply_value)

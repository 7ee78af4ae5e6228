# task: kernelbench/level1/12_Matmul_with_diagonal_matrices_.py  language: cuda  device: cuda
# style: module-level load_inline, hand-written PYBIND11_MODULE in cuda_sources; diag(A) @ B as a row scaling with float4 loads
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

kb1_12_diag_matmul__cuda_module_pybind_cuda_cuda_src = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
// C[i, j] = A[i] * B[i, j]
__global__ void diag_scale_kernel_a(const float* __restrict__ a, const float* __restrict__ B, float* __restrict__ C, int64_t N, int64_t M) {
    int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t total4 = N * M / 4;
    if (idx >= total4) return;
    int64_t i = (idx * 4) / M;
    float s = a[i];
    float4 b = reinterpret_cast<const float4*>(B)[idx];
    reinterpret_cast<float4*>(C)[idx] = make_float4(b.x * s, b.y * s, b.z * s, b.w * s);
}
torch::Tensor diag_scale(torch::Tensor A, torch::Tensor B) {
    auto b = B.contiguous();
    int64_t N = b.size(0), M = b.size(1);
    TORCH_CHECK(M % 4 == 0, "columns must be a multiple of 4");
    auto C = torch::empty_like(b);
    int64_t total4 = N * M / 4;
    diag_scale_kernel_a<<<(unsigned int)((total4 + 255) / 256), 256>>>(A.contiguous().data_ptr<float>(), b.data_ptr<float>(), C.data_ptr<float>(), N, M);
    return C;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
    m.def("diag_scale", &diag_scale, "diag_scale (CUDA)");
}
"""

kb1_12_diag_matmul__cuda_module_pybind_cuda_module = load_inline(
    name="kb1_12_diag_matmul__cuda_module_pybind_cuda_ext",
    cpp_sources="",
    cuda_sources=kb1_12_diag_matmul__cuda_module_pybind_cuda_cuda_src,
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return kb1_12_diag_matmul__cuda_module_pybind_cuda_module.diag_scale(A, B)

# Matrix-vector product: one warp per row, coalesced float loads, shuffle
# reduction; expected verdict: ok.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>

__global__ void matvec_kernel(const float* __restrict__ A, const float* __restrict__ v,
                              float* __restrict__ out, int64_t M, int64_t K) {
    int64_t row = blockIdx.x * (int64_t)(blockDim.x / 32) + threadIdx.x / 32;
    int lane = threadIdx.x & 31;
    if (row >= M) return;  // whole warps leave together, so the shuffles below stay full
    const float* a = A + row * K;
    float acc = 0.0f;
    for (int64_t k = lane; k < K; k += 32) acc += a[k] * v[k];
    for (int offset = 16; offset > 0; offset >>= 1) acc += __shfl_down_sync(0xffffffff, acc, offset);
    if (lane == 0) out[row] = acc;
}

torch::Tensor matvec_cuda(torch::Tensor A, torch::Tensor v) {
    TORCH_CHECK(A.is_cuda() && v.is_cuda(), "expected CUDA tensors");
    TORCH_CHECK(A.scalar_type() == torch::kFloat32 && v.scalar_type() == torch::kFloat32, "expected float32");
    TORCH_CHECK(A.dim() == 2 && v.numel() == A.size(1), "shape mismatch");
    auto a = A.contiguous(), vc = v.contiguous();
    int64_t M = a.size(0), K = a.size(1);
    auto out = torch::empty({M, 1}, a.options());
    const int threads = 256;  // 8 rows per block
    const int64_t blocks = (M + 7) / 8;
    matvec_kernel<<<(unsigned)blocks, threads, 0, c10::cuda::getCurrentCUDAStream()>>>(
        a.data_ptr<float>(), vc.data_ptr<float>(), out.data_ptr<float>(), M, K);
    auto err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "matvec_kernel launch failed: ", cudaGetErrorString(err));
    return out;
}
"""

cpp_source = "torch::Tensor matvec_cuda(torch::Tensor A, torch::Tensor v);"

matvec_ext = load_inline(
    name="kernelmill_builtin_matvec_ok",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["matvec_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return matvec_ext.matvec_cuda(A, v)

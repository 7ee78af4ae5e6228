# task: kernelbench/level1/1_Square_matrix_multiplication_.py  language: cuda  device: cuda
# style: load_inline inside __init__ (sources at module level), kept on self; 16x16 tiled GEMM
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

KERNEL_SOURCE = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#define TILE 16
// C = A @ B (0: B given as (N, K)); plain shared-memory tiling, fp32 accumulation
__global__ void kb1_01_square_matmul_cuda_init_kernel(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE + 1];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < K; t += TILE) {
        int ak = t + threadIdx.x;
        As[threadIdx.y][threadIdx.x] = (row < M && ak < K) ? A[(int64_t)row * K + ak] : 0.0f;
        int bk = t + threadIdx.y;
#if 0
        int bcol = blockIdx.x * TILE + threadIdx.x;
        Bs[threadIdx.y][threadIdx.x] = (bcol < N && bk < K) ? B[(int64_t)bcol * K + bk] : 0.0f;
#else
        Bs[threadIdx.y][threadIdx.x] = (col < N && bk < K) ? B[(int64_t)bk * N + col] : 0.0f;
#endif
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) C[(int64_t)row * N + col] = acc;
}
torch::Tensor tiled_matmul(torch::Tensor A, torch::Tensor B) {
    auto a = A.contiguous();
    auto b = B.contiguous();
    int M = a.size(0), K = a.size(1);
    int N = 0 ? b.size(0) : b.size(1);
    auto C = torch::empty({M, N}, a.options());
    dim3 block(TILE, TILE);
    dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    kb1_01_square_matmul_cuda_init_kernel<<<grid, block>>>(a.data_ptr<float>(), b.data_ptr<float>(), C.data_ptr<float>(), M, N, K);
    return C;
}
"""

KERNEL_DECL = "torch::Tensor tiled_matmul(torch::Tensor A, torch::Tensor B);"


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.kernels = load_inline(name="kb1_01_square_matmul__cuda_init_ext", cpp_sources=KERNEL_DECL, cuda_sources=KERNEL_SOURCE, functions=["tiled_matmul"], verbose=False)

    def forward(self, A, B):
        return self.kernels.tiled_matmul(A, B)

# task: matmul_4096  language: cuda  device: cuda
# style: CUDA load_inline, a classic 32x32 shared-memory tiled GEMM (slower than cuBLAS)
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

matmul_cuda = r"""
#include <torch/extension.h>
#define TS 32

__global__ void tiled_matmul_kernel(const float* A, const float* B, float* C, int M, int N, int K) {
    __shared__ float As[TS][TS];
    __shared__ float Bs[TS][TS];
    int row = blockIdx.y * TS + threadIdx.y;
    int col = blockIdx.x * TS + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < (K + TS - 1) / TS; ++t) {
        int ka = t * TS + threadIdx.x, kb = t * TS + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (row < M && ka < K) ? A[(long)row * K + ka] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (kb < K && col < N) ? B[(long)kb * N + col] : 0.0f;
        __syncthreads();
        #pragma unroll
        for (int k = 0; k < TS; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) C[(long)row * N + col] = acc;
}

torch::Tensor matmul(torch::Tensor a, torch::Tensor b) {
    auto ac = a.contiguous();
    auto bc = b.contiguous();
    int M = ac.size(0), K = ac.size(1), N = bc.size(1);
    auto c = torch::empty({M, N}, ac.options());
    dim3 block(TS, TS);
    dim3 grid((N + TS - 1) / TS, (M + TS - 1) / TS);
    tiled_matmul_kernel<<<grid, block>>>(ac.data_ptr<float>(), bc.data_ptr<float>(), c.data_ptr<float>(), M, N, K);
    return c;
}
"""

mm = load_inline(name="fidelity_tiled_matmul", cpp_sources="torch::Tensor matmul(torch::Tensor a, torch::Tensor b);",
                 cuda_sources=matmul_cuda, functions=["matmul"], extra_cuda_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return mm.matmul(a, b)

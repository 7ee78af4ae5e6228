# Fused linear + bias + ReLU: y = relu(x @ W^T + b) in one tiled kernel, the
# epilogue applied in registers before the single store; expected verdict: ok.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>

#define TILE 32

// x: (M, K) row-major, W: (N, K) row-major (nn.Linear layout), b: (N,)
__global__ void linear_bias_relu_kernel(const float* __restrict__ x, const float* __restrict__ W,
                                        const float* __restrict__ b, float* __restrict__ y,
                                        int M, int N, int K) {
    __shared__ float xs[TILE][TILE];
    __shared__ float ws[TILE][TILE + 1];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    int wrow = blockIdx.x * TILE + threadIdx.y;  // the W row this thread stages
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        int k = k0 + threadIdx.x;
        xs[threadIdx.y][threadIdx.x] = (row < M && k < K) ? x[(int64_t)row * K + k] : 0.0f;
        // stored transposed so the inner loop reads ws[kk][threadIdx.x]
        ws[threadIdx.x][threadIdx.y] = (wrow < N && k < K) ? W[(int64_t)wrow * K + k] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < TILE; ++kk) acc += xs[threadIdx.y][kk] * ws[kk][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) y[(int64_t)row * N + col] = fmaxf(acc + b[col], 0.0f);
}

torch::Tensor linear_bias_relu_cuda(torch::Tensor x, torch::Tensor W, torch::Tensor b) {
    TORCH_CHECK(x.is_cuda() && W.is_cuda() && b.is_cuda(), "expected CUDA tensors");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "expected float32");
    TORCH_CHECK(x.size(1) == W.size(1) && W.size(0) == b.size(0), "shape mismatch");
    auto xc = x.contiguous(), Wc = W.contiguous(), bc = b.contiguous();
    int M = xc.size(0), K = xc.size(1), N = Wc.size(0);
    auto y = torch::empty({M, N}, xc.options());
    dim3 block(TILE, TILE);
    dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    linear_bias_relu_kernel<<<grid, block, 0, c10::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), Wc.data_ptr<float>(), bc.data_ptr<float>(), y.data_ptr<float>(), M, N, K);
    auto err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "linear_bias_relu_kernel launch failed: ", cudaGetErrorString(err));
    return y;
}
"""

cpp_source = "torch::Tensor linear_bias_relu_cuda(torch::Tensor x, torch::Tensor W, torch::Tensor b);"

fused_ext = load_inline(
    name="kernelmill_builtin_gemm_bias_relu_ok",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["linear_bias_relu_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)  # drawn as the reference's is, same seed

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return fused_ext.linear_bias_relu_cuda(x, self.gemm.weight, self.gemm.bias)

# Row-wise inclusive scan: one block per row; each thread sums a contiguous
# chunk, the block scans the chunk totals in shared memory (Hillis-Steele),
# then each thread rewrites its chunk with its offset; expected verdict: ok.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>

#define THREADS 256

__global__ void cumsum_rows_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t cols) {
    __shared__ float totals[THREADS];
    const float* row = x + blockIdx.x * cols;
    float* out = y + blockIdx.x * cols;
    int64_t chunk = (cols + THREADS - 1) / THREADS;
    int64_t begin = threadIdx.x * chunk;
    int64_t end = min(begin + chunk, cols);
    float local = 0.0f;
    for (int64_t j = begin; j < end; ++j) local += row[j];
    totals[threadIdx.x] = local;
    __syncthreads();
    for (int stride = 1; stride < THREADS; stride <<= 1) {
        float add = threadIdx.x >= stride ? totals[threadIdx.x - stride] : 0.0f;
        __syncthreads();
        totals[threadIdx.x] += add;
        __syncthreads();
    }
    float running = threadIdx.x > 0 ? totals[threadIdx.x - 1] : 0.0f;  // exclusive offset
    for (int64_t j = begin; j < end; ++j) {
        running += row[j];
        out[j] = running;
    }
}

torch::Tensor cumsum_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32 && x.dim() == 2, "expected a 2-D float32 CUDA tensor");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    cumsum_rows_kernel<<<(unsigned)xc.size(0), THREADS, 0, c10::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), y.data_ptr<float>(), xc.size(1));
    auto err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "cumsum_rows_kernel launch failed: ", cudaGetErrorString(err));
    return y;
}
"""

cpp_source = "torch::Tensor cumsum_cuda(torch::Tensor x);"

cumsum_ext = load_inline(
    name="kernelmill_builtin_cumsum_ok",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["cumsum_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return cumsum_ext.cumsum_cuda(x)

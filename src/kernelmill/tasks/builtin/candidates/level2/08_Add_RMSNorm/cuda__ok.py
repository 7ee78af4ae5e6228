# Fused residual add + RMSNorm: one block per row; h = x + r is formed once
# in the statistics pass and again in the output pass (cheaper than a round
# trip through global memory); expected verdict: ok.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>

__global__ void add_rmsnorm_kernel(const float* __restrict__ x, const float* __restrict__ r,
                                   const float* __restrict__ w, float* __restrict__ y,
                                   int64_t cols, float eps) {
    __shared__ float partial[32];
    __shared__ float rstd;
    int64_t base = blockIdx.x * cols;
    float sq = 0.0f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
        float h = x[base + j] + r[base + j];
        sq += h * h;
    }
    for (int o = 16; o > 0; o >>= 1) sq += __shfl_down_sync(0xffffffff, sq, o);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) partial[warp] = sq;
    __syncthreads();
    if (warp == 0) {
        sq = lane < (blockDim.x >> 5) ? partial[lane] : 0.0f;
        for (int o = 16; o > 0; o >>= 1) sq += __shfl_down_sync(0xffffffff, sq, o);
        if (lane == 0) rstd = rsqrtf(sq / cols + eps);
    }
    __syncthreads();
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
        y[base + j] = (x[base + j] + r[base + j]) * rstd * w[j];
}

torch::Tensor add_rmsnorm_cuda(torch::Tensor x, torch::Tensor residual, torch::Tensor weight, double eps) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "expected a float32 CUDA tensor");
    TORCH_CHECK(x.sizes() == residual.sizes(), "shape mismatch");
    auto xc = x.contiguous(), rc = residual.contiguous(), wc = weight.contiguous();
    int64_t cols = xc.size(-1);
    int64_t rows = xc.numel() / cols;
    auto y = torch::empty_like(xc);
    add_rmsnorm_kernel<<<(unsigned)rows, 256, 0, c10::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), rc.data_ptr<float>(), wc.data_ptr<float>(), y.data_ptr<float>(),
        cols, (float)eps);
    auto err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "add_rmsnorm_kernel launch failed: ", cudaGetErrorString(err));
    return y;
}
"""

cpp_source = "torch::Tensor add_rmsnorm_cuda(torch::Tensor x, torch::Tensor residual, torch::Tensor weight, double eps);"

rms_ext = load_inline(
    name="kernelmill_builtin_add_rmsnorm_ok",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["add_rmsnorm_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        # drawn as the reference draws it, so under the same seed it is equal
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(hidden))

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return rms_ext.add_rmsnorm_cuda(x, residual, self.weight, self.eps)

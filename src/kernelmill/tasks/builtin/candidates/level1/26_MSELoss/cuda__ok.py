# MSE: grid-stride squared differences, per-block reduction, one atomicAdd
# per block into a scalar, scaled by 1/n on the device; expected verdict: ok.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>

__global__ void sq_diff_sum_kernel(const float* __restrict__ p, const float* __restrict__ t,
                                   float* __restrict__ out, int64_t n, float inv_n) {
    __shared__ float partial[32];
    float acc = 0.0f;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        float d = p[i] - t[i];
        acc += d * d;
    }
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffff, acc, o);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) partial[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        acc = lane < (blockDim.x >> 5) ? partial[lane] : 0.0f;
        for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffff, acc, o);
        // scaling each block's share keeps the running total small
        if (lane == 0) atomicAdd(out, acc * inv_n);
    }
}

torch::Tensor mse_cuda(torch::Tensor pred, torch::Tensor target) {
    TORCH_CHECK(pred.is_cuda() && target.is_cuda(), "expected CUDA tensors");
    TORCH_CHECK(pred.sizes() == target.sizes(), "shape mismatch");
    auto p = pred.contiguous(), t = target.contiguous();
    int64_t n = p.numel();
    auto out = torch::zeros({}, p.options());
    const int threads = 256;
    const int blocks = (int)std::min<int64_t>((n + threads - 1) / threads, 1024);
    sq_diff_sum_kernel<<<blocks, threads, 0, c10::cuda::getCurrentCUDAStream()>>>(
        p.data_ptr<float>(), t.data_ptr<float>(), out.data_ptr<float>(), n, 1.0f / (float)n);
    auto err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "sq_diff_sum_kernel launch failed: ", cudaGetErrorString(err));
    return out;
}
"""

cpp_source = "torch::Tensor mse_cuda(torch::Tensor pred, torch::Tensor target);"

mse_ext = load_inline(
    name="kernelmill_builtin_mse_ok",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["mse_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return mse_ext.mse_cuda(predictions, targets)

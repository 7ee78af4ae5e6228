# Row softmax: one block per row, block max, block sum of exp(x - max),
# then normalise; expected verdict: ok.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>

__inline__ __device__ float block_reduce(float v, float* shared, bool is_max) {
    for (int o = 16; o > 0; o >>= 1) {
        float other = __shfl_down_sync(0xffffffff, v, o);
        v = is_max ? fmaxf(v, other) : v + other;
    }
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    float identity = is_max ? -INFINITY : 0.0f;
    v = threadIdx.x < (blockDim.x >> 5) ? shared[threadIdx.x] : identity;
    if (warp == 0) {
        for (int o = 16; o > 0; o >>= 1) {
            float other = __shfl_down_sync(0xffffffff, v, o);
            v = is_max ? fmaxf(v, other) : v + other;
        }
    }
    if (threadIdx.x == 0) shared[0] = v;
    __syncthreads();
    float result = shared[0];
    __syncthreads();
    return result;
}

__global__ void softmax_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t cols) {
    __shared__ float shared[32];
    const float* row = x + blockIdx.x * cols;
    float* out = y + blockIdx.x * cols;
    float m = -INFINITY;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) m = fmaxf(m, row[j]);
    m = block_reduce(m, shared, true);
    float s = 0.0f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) s += expf(row[j] - m);
    s = block_reduce(s, shared, false);
    float inv = 1.0f / s;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) out[j] = expf(row[j] - m) * inv;
}

torch::Tensor softmax_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "expected a float32 CUDA tensor");
    auto xc = x.contiguous();
    int64_t cols = xc.size(-1);
    int64_t rows = xc.numel() / cols;
    auto y = torch::empty_like(xc);
    softmax_kernel<<<(unsigned)rows, 256, 0, c10::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), y.data_ptr<float>(), cols);
    auto err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "softmax_kernel launch failed: ", cudaGetErrorString(err));
    return y;
}
"""

cpp_source = "torch::Tensor softmax_cuda(torch::Tensor x);"

softmax_ext = load_inline(
    name="kernelmill_builtin_softmax_ok",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["softmax_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return softmax_ext.softmax_cuda(x)

# LayerNorm: one block per row, two-pass statistics (mean, then centred
# variance) for accuracy, affine applied in the same pass; expected verdict: ok.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>

__inline__ __device__ float block_sum(float v, float* shared) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    v = threadIdx.x < (blockDim.x >> 5) ? shared[threadIdx.x] : 0.0f;
    if (warp == 0)
        for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
    if (threadIdx.x == 0) shared[0] = v;
    __syncthreads();
    float total = shared[0];
    __syncthreads();  // shared[] is reused by the next call
    return total;
}

__global__ void layernorm_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                 const float* __restrict__ b, float* __restrict__ y,
                                 int64_t cols, float eps) {
    __shared__ float shared[32];
    const float* row = x + blockIdx.x * cols;
    float* out = y + blockIdx.x * cols;
    float s = 0.0f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) s += row[j];
    float mean = block_sum(s, shared) / cols;
    float sq = 0.0f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
        float d = row[j] - mean;
        sq += d * d;
    }
    float rstd = rsqrtf(block_sum(sq, shared) / cols + eps);
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x)
        out[j] = (row[j] - mean) * rstd * w[j] + b[j];
}

torch::Tensor layernorm_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "expected a float32 CUDA tensor");
    auto xc = x.contiguous();
    auto w = weight.contiguous(), b = bias.contiguous();
    int64_t cols = xc.size(-1);
    int64_t rows = xc.numel() / cols;
    auto y = torch::empty_like(xc);
    layernorm_kernel<<<(unsigned)rows, 256, 0, c10::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>(),
        cols, (float)eps);
    auto err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "layernorm_kernel launch failed: ", cudaGetErrorString(err));
    return y;
}
"""

cpp_source = "torch::Tensor layernorm_cuda(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps);"

ln_ext = load_inline(
    name="kernelmill_builtin_layernorm_ok",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["layernorm_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.norm = nn.LayerNorm(hidden, eps=1e-5)
        # the reference's custom affine init, in its order: under the same seed
        # these parameters come out equal to the reference's
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ln_ext.layernorm_cuda(x, self.norm.weight, self.norm.bias, self.norm.eps)

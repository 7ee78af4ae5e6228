# Row sum: one block per row, strided loads, warp-shuffle + shared-memory
# block reduction; expected verdict: ok.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>

__inline__ __device__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffff, v, offset);
    return v;
}

__global__ void row_sum_kernel(const float* __restrict__ x, float* __restrict__ out, int64_t cols) {
    __shared__ float partial[32];
    const float* row = x + blockIdx.x * cols;
    float acc = 0.0f;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) acc += row[j];
    acc = warp_sum(acc);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) partial[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        acc = lane < (blockDim.x >> 5) ? partial[lane] : 0.0f;
        acc = warp_sum(acc);
        if (lane == 0) out[blockIdx.x] = acc;
    }
}

torch::Tensor row_sum_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "expected a float32 CUDA tensor");
    auto xc = x.contiguous();
    int64_t cols = xc.size(-1);
    int64_t rows = xc.numel() / cols;
    auto sizes = xc.sizes().vec();
    sizes.back() = 1;
    auto out = torch::empty(sizes, xc.options());
    row_sum_kernel<<<(unsigned)rows, 256, 0, c10::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), out.data_ptr<float>(), cols);
    auto err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "row_sum_kernel launch failed: ", cudaGetErrorString(err));
    return out;
}
"""

cpp_source = "torch::Tensor row_sum_cuda(torch::Tensor x);"

sum_ext = load_inline(
    name="kernelmill_builtin_sum_ok",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["row_sum_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return sum_ext.row_sum_cuda(x)

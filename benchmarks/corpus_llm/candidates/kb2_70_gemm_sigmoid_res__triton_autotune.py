# task: kernelbench/level2/70_Gemm_Sigmoid_Scaling_ResidualAdd.py  language: triton  device: cuda
# style: cuBLAS linear, @triton.autotune epilogue
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_SIZE": 1024}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 2048}, num_warps=8),
        triton.Config({"BLOCK_SIZE": 4096}, num_warps=8),
    ],
    key=["n_elements"],
)
@triton.jit
def sigmoid_scale_res_kernel(x_ptr, y_ptr, n_elements, scale, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.sigmoid(x) * scale + x
    tl.store(y_ptr + offsets, y, mask=mask)


def launch_sigmoid_scale_res_kernel(x: torch.Tensor , scale: float) -> torch.Tensor:
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)
    sigmoid_scale_res_kernel[grid](x, y, n, scale)
    return y


class ModelNew(nn.Module):
    def __init__(self, input_size, hidden_size, scaling_factor):
        super().__init__()
        self.gemm = nn.Linear(input_size, hidden_size)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        y = self.gemm(x)
        return launch_sigmoid_scale_res_kernel(y, self.scaling_factor)

# task: kernelbench/level2/63_Gemm_ReLU_Divide.py  language: triton  device: cuda
# style: cuBLAS linear, then a @triton.autotune epilogue kernel
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
def relu_div_kernel(x_ptr, y_ptr, n_elements, divisor, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.maximum(x, 0.0) / divisor
    tl.store(y_ptr + offsets, y, mask=mask)


def launch_relu_div_kernel(x: torch.Tensor , divisor: float) -> torch.Tensor:
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)
    relu_div_kernel[grid](x, y, n, divisor)
    return y


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, divisor):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.divisor = divisor

    def forward(self, x):
        y = self.linear(x)
        return launch_relu_div_kernel(y, self.divisor)

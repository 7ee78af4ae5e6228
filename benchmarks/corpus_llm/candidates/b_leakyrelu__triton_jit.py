# task: builtin/level1/05_LeakyReLU.py  language: triton  device: cuda
# style: @triton.jit elementwise kernel with a fixed BLOCK_SIZE
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def leaky_relu_kernel(x_ptr, y_ptr, n_elements, slope, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.where(x > 0, x, x * slope)
    tl.store(y_ptr + offsets, y, mask=mask)


def launch_leaky_relu_kernel(x: torch.Tensor , slope: float) -> torch.Tensor:
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    BLOCK = 1024
    grid = (triton.cdiv(n, BLOCK),)
    leaky_relu_kernel[grid](x, y, n, slope, BLOCK_SIZE=BLOCK)
    return y


class ModelNew(nn.Module):
    def __init__(self, negative_slope: float):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x):
        return launch_leaky_relu_kernel(x, self.negative_slope)

# task: kernelbench/level2/9_Matmul_Subtract_Multiply_ReLU.py  language: triton  device: cuda
# style: @triton.jit elementwise kernel with a fixed BLOCK_SIZE
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def sub_mul_relu_kernel(x_ptr, y_ptr, n_elements, sub, mul, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.maximum((x - sub) * mul, 0.0)
    tl.store(y_ptr + offsets, y, mask=mask)


def launch_sub_mul_relu_kernel(x: torch.Tensor , sub: float, mul: float) -> torch.Tensor:
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    BLOCK = 1024
    grid = (triton.cdiv(n, BLOCK),)
    sub_mul_relu_kernel[grid](x, y, n, sub, mul, BLOCK_SIZE=BLOCK)
    return y


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, subtract_value, multiply_value):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.subtract_value = subtract_value
        self.multiply_value = multiply_value

    def forward(self, x):
        y = self.linear(x)
        return launch_sub_mul_relu_kernel(y, self.subtract_value, self.multiply_value)

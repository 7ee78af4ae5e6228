# task: softmax_rows  language: triton  device: cuda
# style: Triton with @triton.autotune over num_warps, one row per program
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({}, num_warps=w) for w in (4, 8, 16)],
    key=["n_cols"],
)
@triton.jit
def softmax_kernel(x_ptr, y_ptr, row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * row_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    y = num / tl.sum(num, axis=0)
    tl.store(y_ptr + row * row_stride + cols, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        rows, cols = x.shape
        y = torch.empty_like(x)
        softmax_kernel[(rows,)](x, y, x.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
        return y

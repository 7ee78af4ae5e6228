# task: builtin/level1/24_Softmax.py  language: triton  device: cuda
# style: @triton.autotune over num_warps, one program per row
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({}, num_warps=w) for w in (4, 8, 16)], key=["n_cols"])
@triton.jit
def softmax_kernel(x_ptr, y_ptr, row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * row_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    den = tl.sum(num, axis=0)
    tl.store(y_ptr + row * row_stride + cols, num / den, mask=mask)


def triton_softmax(x):
    x2 = x.contiguous().view(-1, x.shape[-1])
    y = torch.empty_like(x2)
    n_rows, n_cols = x2.shape
    softmax_kernel[(n_rows,)](x2, y, x2.stride(0), n_cols, BLOCK=triton.next_power_of_2(n_cols))
    return y.view_as(x)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return triton_softmax(x)

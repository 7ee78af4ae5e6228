# Row sum in Triton: one program per row, looping over the row in blocks
# and accumulating a vector before the final tl.sum; expected verdict: ok.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, cols, row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * row_stride + offs, mask=offs < cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


def row_sum(x: torch.Tensor) -> torch.Tensor:
    x2 = x.reshape(-1, x.shape[-1]).contiguous()
    rows, cols = x2.shape
    out = torch.empty(rows, dtype=x.dtype, device=x.device)
    BLOCK = min(1024, triton.next_power_of_2(cols))
    row_sum_kernel[(rows,)](x2, out, cols, x2.stride(0), BLOCK=BLOCK)
    return out.reshape(*x.shape[:-1], 1)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return row_sum(x)

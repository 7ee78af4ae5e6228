# Row softmax in Triton: the whole row in one block (next power of two),
# max-subtracted for stability; expected verdict: ok.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    base = tl.program_id(0) * cols
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + base + offs, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + base + offs, e / tl.sum(e, axis=0), mask=mask)


def softmax(x: torch.Tensor) -> torch.Tensor:
    xc = x.contiguous()
    cols = xc.shape[-1]
    y = torch.empty_like(xc)
    softmax_kernel[(xc.numel() // cols,)](xc, y, cols, BLOCK=triton.next_power_of_2(cols))
    return y


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return softmax(x)

# task: swish_4m  language: triton  device: both
# style: Triton @triton.jit, sigmoid and multiply fused
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def swish_kernel(x_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    out = x * tl.sigmoid(x)
    tl.store(out_ptr + offsets, out, mask=mask)


def swish(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)  # noqa: E731
    swish_kernel[grid](x, out, n, BLOCK_SIZE=2048)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return swish(x)

# task: scale_add  language: triton  device: both
# style: Triton @triton.jit, a*alpha+b in one kernel
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def scale_add_kernel(a_ptr, b_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, a * alpha + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        a = a.contiguous()
        b = b.contiguous()
        out = torch.empty_like(a)
        n = a.numel()
        scale_add_kernel[(triton.cdiv(n, 4096),)](a, b, out, 2.0, n, BLOCK=4096)
        return out

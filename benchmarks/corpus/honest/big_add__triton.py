# task: big_add  language: triton  device: cuda
# style: Triton @triton.autotune over block size for a bandwidth-bound add
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({"BLOCK": b}, num_warps=4) for b in (1024, 4096)], key=["n"])
@triton.jit
def add_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(c_ptr + offs, tl.load(a_ptr + offs, mask=mask) + tl.load(b_ptr + offs, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        c = torch.empty_like(a)
        n = a.numel()
        add_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](a, b, c, n)
        return c

# task: builtin/level2/08_Add_RMSNorm.py  language: triton  device: cuda
# style: @triton.autotune residual-add + RMSNorm in one row kernel
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({}, num_warps=w) for w in (4, 8)], key=["n_cols"])
@triton.jit
def add_rmsnorm_kernel(x_ptr, r_ptr, w_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    h = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    h += tl.load(r_ptr + row * n_cols + cols, mask=mask, other=0.0)
    ms = tl.sum(h * h, axis=0) / n_cols
    r = 1.0 / tl.sqrt(ms + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * n_cols + cols, h * r * w, mask=mask)


def add_rmsnorm(x, residual, w, eps):
    n = x.shape[-1]
    x2 = x.contiguous().view(-1, n)
    r2 = residual.contiguous().view(-1, n)
    y = torch.empty_like(x2)
    add_rmsnorm_kernel[(x2.shape[0],)](x2, r2, w, y, n, eps, BLOCK=triton.next_power_of_2(n))
    return y.view_as(x)


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(hidden))

    def forward(self, x, residual):
        return add_rmsnorm(x, residual, self.weight, self.eps)

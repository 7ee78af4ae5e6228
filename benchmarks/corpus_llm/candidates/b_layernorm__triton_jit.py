# task: builtin/level1/20_LayerNorm.py  language: triton  device: cuda
# style: @triton.jit row kernel, whole row in one block
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n_cols
    d = tl.where(mask, x - mean, 0.0)
    var = tl.sum(d * d, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * n_cols + cols, d * rstd * w + b, mask=mask)


def layernorm(x, weight, bias, eps):
    n_cols = x.shape[-1]
    x2 = x.contiguous().view(-1, n_cols)
    y = torch.empty_like(x2)
    layernorm_kernel[(x2.shape[0],)](x2, weight, bias, y, n_cols, eps, BLOCK=triton.next_power_of_2(n_cols), num_warps=8)
    return y.view_as(x)


class ModelNew(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.norm = nn.LayerNorm(hidden, eps=1e-5)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        return layernorm(x, self.norm.weight, self.norm.bias, self.norm.eps)

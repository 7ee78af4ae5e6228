# Residual add + RMSNorm in Triton that takes the RMS statistic from x alone
# instead of from h = x + residual (the output still uses h), so the scale is
# wrong on every row. Expected verdict: incorrect.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_rmsnorm_kernel(x_ptr, r_ptr, w_ptr, y_ptr, cols, eps, BLOCK: tl.constexpr):
    base = tl.program_id(0) * cols
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + base + offs, mask=mask, other=0.0)
    h = x + tl.load(r_ptr + base + offs, mask=mask, other=0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / cols + eps)  # BUG: should use h
    w = tl.load(w_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + base + offs, h * rstd * w, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        # drawn as the reference draws it, so under the same seed it is equal
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(hidden))

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        xc, rc = x.contiguous(), residual.contiguous()
        cols = xc.shape[-1]
        y = torch.empty_like(xc)
        add_rmsnorm_kernel[(xc.numel() // cols,)](xc, rc, self.weight, y, cols, self.eps,
                                                  BLOCK=triton.next_power_of_2(cols))
        return y

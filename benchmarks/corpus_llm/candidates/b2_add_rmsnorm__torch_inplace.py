# task: builtin/level2/08_Add_RMSNorm.py  language: torch  device: both
# style: torch rewrite: add, then one fused expression with x*x
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(hidden))

    def forward(self, x, residual):
        h = torch.add(x, residual)
        return h * torch.rsqrt((h * h).mean(dim=-1, keepdim=True) + self.eps) * self.weight

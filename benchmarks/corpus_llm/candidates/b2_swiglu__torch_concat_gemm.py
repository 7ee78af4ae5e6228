# task: builtin/level2/09_SwiGLU.py  language: torch  device: both
# style: torch rewrite: gate and up projections concatenated into one GEMM, then chunk
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)

    def forward(self, x):
        w = torch.cat([self.gate.weight, self.up.weight], dim=0)
        g, u = F.linear(x, w).chunk(2, dim=-1)
        return F.silu(g) * u

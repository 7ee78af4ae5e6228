# task: builtin/level2/03_Matmul_Scale_Residual.py  language: torch  device: both
# style: torch rewrite that drops the scale
# expect: incorrect
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, dim: int, scale: float):
        super().__init__()
        self.proj = nn.Linear(dim, dim, bias=False)
        self.scale = scale

    def forward(self, x):
        return x + self.proj(x)

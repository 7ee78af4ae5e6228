# task: builtin/level1/06_Sum.py  language: torch  device: both
# style: torch rewrite that drops keepdim: output shape (B,) instead of (B, 1)
# expect: incorrect
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.sum(dim=-1)

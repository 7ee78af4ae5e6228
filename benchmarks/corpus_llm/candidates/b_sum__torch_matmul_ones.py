# task: builtin/level1/06_Sum.py  language: torch  device: both
# style: torch rewrite: row sums as a GEMV with a ones vector
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        ones = torch.ones(x.shape[-1], 1, device=x.device, dtype=x.dtype)
        return x @ ones

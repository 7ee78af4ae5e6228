# task: big_sum  language: torch  device: both
# style: torch rewrite, the row sum as a matrix-vector product with ones
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        ones = torch.ones(x.shape[1], device=x.device, dtype=x.dtype)
        return torch.mv(x, ones)

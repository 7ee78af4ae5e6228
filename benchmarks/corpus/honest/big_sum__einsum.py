# task: big_sum  language: torch  device: both
# style: torch rewrite, einsum row reduction
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.einsum("ij->i", x)

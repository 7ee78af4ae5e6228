# task: matmul_8192  language: torch  device: both
# style: torch rewrite, torch.mm on contiguous operands
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.mm(a.contiguous(), b.contiguous())

# task: matmul_4096  language: torch  device: both
# style: torch rewrite, torch.mm
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.mm(a, b)

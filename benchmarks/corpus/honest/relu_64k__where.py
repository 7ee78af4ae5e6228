# task: relu_64k  language: torch  device: both
# style: torch rewrite, a slower where() with a zeros tensor (extra kernels)
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.where(x > 0, x, torch.zeros_like(x))

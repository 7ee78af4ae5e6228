# task: relu_64k  language: torch  device: both
# style: torch rewrite, one clamp_min call
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.clamp_min(x, 0.0)

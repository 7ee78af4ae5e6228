# task: mse_loss  language: torch  device: both
# style: torch rewrite, the squared sum as a dot product of the difference
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        d = a - b
        return torch.dot(d, d) / d.numel()

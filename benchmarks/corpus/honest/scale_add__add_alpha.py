# task: scale_add  language: torch  device: both
# style: fused ops, torch.add with alpha (one kernel instead of two)
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.add(b, a, alpha=2.0)

# task: big_add  language: torch  device: both
# style: torch rewrite, torch.add (same kernel as the reference)
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.add(a, b)

# task: big_add  language: torch  device: both
# style: torch rewrite, a slower clone then in-place add (one extra full copy)
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        out = a.clone()
        out.add_(b)
        return out

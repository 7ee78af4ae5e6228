# task: clamp_scale  language: torch  device: both
# style: torch rewrite, F.hardtanh then in-place multiply on the fresh tensor
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.hardtanh(x, -1.0, 1.0).mul_(3.0)

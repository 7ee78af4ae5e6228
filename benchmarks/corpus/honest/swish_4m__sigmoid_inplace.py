# task: swish_4m  language: torch  device: both
# style: torch rewrite, sigmoid then an in-place multiply on the fresh tensor
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.sigmoid(x).mul_(x)

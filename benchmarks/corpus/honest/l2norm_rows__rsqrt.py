# task: l2norm_rows  language: torch  device: both
# style: reordered ops, multiply by rsqrt of the summed squares
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x * torch.rsqrt((x * x).sum(dim=1, keepdim=True))

# task: l2norm_rows  language: torch  device: both
# style: torch rewrite, F.normalize
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.normalize(x, p=2.0, dim=1)

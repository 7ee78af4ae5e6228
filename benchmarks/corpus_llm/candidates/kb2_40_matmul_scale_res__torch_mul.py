# task: kernelbench/level2/40_Matmul_Scaling_ResidualAdd.py  language: torch  device: cuda
# style: torch rewrite: y*s + y as one multiply by (1 + s)
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        return self.matmul(x) * (1.0 + self.scaling_factor)

# task: kernelbench/level2/29_Matmul_Mish_Mish.py  language: torch  device: cuda
# style: torch rewrite: F.mish twice, in place
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        y = self.linear(x)
        return F.mish(F.mish(y, inplace=True), inplace=True)

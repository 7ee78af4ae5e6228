# task: kernelbench/level2/99_Matmul_GELU_Softmax.py  language: torch  device: cuda
# style: torch rewrite with softmax over dim 0 instead of dim 1
# expect: incorrect
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.softmax(F.gelu(self.linear(x)), dim=0)

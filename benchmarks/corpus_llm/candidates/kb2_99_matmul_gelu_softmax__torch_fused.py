# task: kernelbench/level2/99_Matmul_GELU_Softmax.py  language: torch  device: cuda
# style: torch rewrite: torch.softmax on F.gelu of addmm
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        y = torch.addmm(self.linear.bias, x, self.linear.weight.t())
        return torch.softmax(F.gelu(y), dim=1)

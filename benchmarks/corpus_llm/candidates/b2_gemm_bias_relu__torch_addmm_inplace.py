# task: builtin/level2/01_Gemm_Bias_ReLU.py  language: torch  device: both
# style: torch rewrite: addmm then in-place relu_
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.addmm(self.gemm.bias, x, self.gemm.weight.t()).relu_()

# task: kernelbench/level2/12_Gemm_Multiply_LeakyReLU.py  language: torch  device: cuda
# style: torch rewrite: addmm with alpha/beta = multiplier, then leaky_relu_
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, multiplier, negative_slope):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.multiplier = multiplier
        self.negative_slope = negative_slope

    def forward(self, x):
        y = torch.addmm(self.gemm.bias, x, self.gemm.weight.t(), beta=self.multiplier, alpha=self.multiplier)
        return F.leaky_relu(y, self.negative_slope, inplace=True)

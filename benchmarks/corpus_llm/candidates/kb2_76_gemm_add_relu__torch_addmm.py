# task: kernelbench/level2/76_Gemm_Add_ReLU.py  language: torch  device: cuda
# style: torch rewrite: the bias add folded into addmm, relu_ in place
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, bias_shape):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, bias=False)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        return torch.addmm(self.bias, x, self.gemm.weight.t()).relu_()

# Linear + bias + ReLU as one addmm and an in-place clamp; expected verdict: ok.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.addmm(self.gemm.bias, x, self.gemm.weight.t()).clamp_min_(0.0)

# task: builtin/level1/03_Sigmoid.py  language: torch  device: both
# style: torch rewrite: sigmoid written as reciprocal(1 + exp(-x))
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.reciprocal(1.0 + torch.exp(-x))

# task: kernelbench/level1/88_MinGPTNewGelu.py  language: torch  device: cuda
# style: torch rewrite: F.gelu(approximate='tanh')
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.gelu(x, approximate="tanh")

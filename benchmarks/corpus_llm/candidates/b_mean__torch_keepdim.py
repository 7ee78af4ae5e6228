# task: builtin/level1/09_Mean.py  language: torch  device: both
# style: torch rewrite with keepdim=True: output shape (B, 1, H) instead of (B, H)
# expect: incorrect
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.mean(dim=1, keepdim=True)

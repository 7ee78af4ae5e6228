# task: builtin/level1/09_Mean.py  language: torch  device: both
# style: torch rewrite: sum then divide
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.sum(dim=1) / x.shape[1]

# task: builtin/level1/12_MatVec.py  language: torch  device: both
# style: torch rewrite: torch.mv on the squeezed vector
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, v):
        return torch.mv(A, v.squeeze(1)).unsqueeze(1)

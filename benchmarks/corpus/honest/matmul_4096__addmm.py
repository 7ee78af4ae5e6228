# task: matmul_4096  language: torch  device: both
# style: matmul via addmm with beta=0 into a fresh output
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        out = torch.empty(a.shape[0], b.shape[1], device=a.device, dtype=a.dtype)
        return torch.addmm(out, a, b, beta=0.0, alpha=1.0)

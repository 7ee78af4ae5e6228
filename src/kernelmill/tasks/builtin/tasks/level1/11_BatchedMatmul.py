# kernelmill: level=1 op_type=single
"""Batched matrix multiply: (b, m, k) @ (b, k, n)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.bmm(A, B)


batch_size = 128
m = 512
k = 1024
n = 256
SIZE_PROFILES = {"small": {"batch_size": 2, "m": 12, "k": 20, "n": 16}}


def get_inputs():
    return [torch.randn(batch_size, m, k), torch.randn(batch_size, k, n)]


def get_init_inputs():
    return []

# kernelmill: level=1 op_type=single
"""Matrix times column vector: (M, K) @ (K, 1) -> (M, 1)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, v)


M = 8192
K = 16384
SIZE_PROFILES = {"small": {"M": 32, "K": 70}}


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, 1)]


def get_init_inputs():
    return []

# kernelmill: level=1 op_type=single
"""C = A^T @ B where A is stored (K, M): the left operand is read transposed."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A.T, B)


M = 2048
K = 4096
N = 2048
SIZE_PROFILES = {"small": {"M": 16, "K": 24, "N": 20}}


def get_inputs():
    return [torch.randn(K, M), torch.randn(K, N)]


def get_init_inputs():
    return []

"""Matrix (8192, 8192) times vector (8192, 1): 256 MB of matrix read (about 0.1 ms on an H100)."""
import torch
import torch.nn as nn

M = 8192
K = 8192
SIZE_PROFILES = {"small": {"M": 512, "K": 1024}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, x):
        return torch.matmul(a, x)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, 1)]


def get_init_inputs():
    return []

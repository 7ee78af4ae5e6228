"""fp32 GEMM (8192 x 4096) @ (4096 x 8192) (TF32 off: about 10 ms on an H100)."""
import torch
import torch.nn as nn

M = 8192
K = 4096
N = 8192
SIZE_PROFILES = {"small": {"M": 128, "K": 128, "N": 128}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []

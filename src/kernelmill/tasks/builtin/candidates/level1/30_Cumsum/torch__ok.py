# Prefix sum as a matmul with an upper-triangular matrix of ones:
# y[i, j] = sum_k x[i, k] * U[k, j], U[k, j] = 1 for k <= j; expected verdict: ok.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.shape[1]
        upper = torch.ones(n, n, dtype=x.dtype, device=x.device).triu()
        return x @ upper

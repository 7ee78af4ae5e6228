# kernelmill: level=2 op_type=fusion
"""Residual add followed by RMSNorm (the pre-norm step of an LLM layer)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(hidden))

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        h = x + residual
        return h * torch.rsqrt(h.pow(2).mean(dim=-1, keepdim=True) + self.eps) * self.weight


batch_size = 8
seq_len = 2048
hidden = 4096
SIZE_PROFILES = {"small": {"batch_size": 2, "seq_len": 3, "hidden": 200}}


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden), torch.randn(batch_size, seq_len, hidden)]


def get_init_inputs():
    return [hidden]

# kernelmill: level=2 op_type=fusion
"""SwiGLU feed-forward input: silu(x W_gate^T) * (x W_up^T)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.silu(self.gate(x)) * self.up(x)


batch_size = 1024
dim = 2048
hidden = 5632
SIZE_PROFILES = {"small": {"batch_size": 4, "dim": 16, "hidden": 40}}


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [dim, hidden]

# kernelmill: level=2 op_type=fusion
"""Square projection, scaled, added back to its input (a residual branch)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim: int, scale: float):
        super().__init__()
        self.proj = nn.Linear(dim, dim, bias=False)
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.proj(x) * self.scale


batch_size = 2048
dim = 4096
scale = 0.5
SIZE_PROFILES = {"small": {"batch_size": 6, "dim": 32}}


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [dim, scale]

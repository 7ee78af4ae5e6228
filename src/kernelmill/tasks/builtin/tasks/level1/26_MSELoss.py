# kernelmill: level=1 op_type=single
"""Mean squared error between predictions and targets (scalar output)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.mean((predictions - targets) ** 2)


batch_size = 8192
dim = 4096
SIZE_PROFILES = {"small": {"batch_size": 16, "dim": 100}}


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randn(batch_size, dim)]


def get_init_inputs():
    return []

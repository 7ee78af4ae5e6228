# kernelmill: level=1 op_type=single
"""Index of the largest element of each row (int64 output)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.argmax(x, dim=1)


batch_size = 8192
dim = 4096
SIZE_PROFILES = {"small": {"batch_size": 8, "dim": 200}}


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []

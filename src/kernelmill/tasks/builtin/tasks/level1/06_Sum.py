# kernelmill: level=1 op_type=single
"""Row sum: reduce the last dimension, keeping it as size 1."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=-1, keepdim=True)


batch_size = 8192
dim = 8192
SIZE_PROFILES = {"small": {"batch_size": 8, "dim": 300}}


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []

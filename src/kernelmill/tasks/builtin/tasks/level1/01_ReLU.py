# kernelmill: level=1 op_type=single
"""ReLU over a large 2-D activation tensor (memory bound)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


batch_size = 4096
dim = 16384
SIZE_PROFILES = {"small": {"batch_size": 4, "dim": 1000}}


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []

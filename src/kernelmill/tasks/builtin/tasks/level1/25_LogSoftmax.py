# kernelmill: level=1 op_type=single
"""Log-softmax over dimension 1."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(x, dim=1)


batch_size = 4096
dim = 8192
SIZE_PROFILES = {"small": {"batch_size": 8, "dim": 260}}


def get_inputs():
    return [torch.randn(batch_size, dim) * 10.0]


def get_init_inputs():
    return []

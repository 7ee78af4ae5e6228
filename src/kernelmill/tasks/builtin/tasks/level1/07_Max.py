# kernelmill: level=1 op_type=single
"""Max over the middle dimension of a 3-D tensor (strided reduction)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.max(x, dim=self.dim).values


batch_size = 32
dim1 = 1024
dim2 = 2048
reduce_dim = 1
SIZE_PROFILES = {"small": {"batch_size": 2, "dim1": 16, "dim2": 40}}


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2)]


def get_init_inputs():
    return [reduce_dim]

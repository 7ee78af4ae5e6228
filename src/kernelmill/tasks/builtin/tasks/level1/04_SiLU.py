# kernelmill: level=1 op_type=single
"""SiLU (swish): x * sigmoid(x), elementwise."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(x)


batch_size = 2048
dim = 32768
SIZE_PROFILES = {"small": {"batch_size": 3, "dim": 1024}}


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []

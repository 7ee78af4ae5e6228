# kernelmill: level=1 op_type=single
"""Logistic sigmoid, elementwise, on a 3-D tensor."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(x)


batch_size = 64
seq_len = 1024
hidden = 1024
SIZE_PROFILES = {"small": {"batch_size": 2, "seq_len": 8, "hidden": 200}}


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden) * 4.0]


def get_init_inputs():
    return []

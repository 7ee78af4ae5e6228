# kernelmill: level=1 op_type=single
"""Mean over the sequence dimension (mean pooling of token states)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.mean(dim=1)


batch_size = 64
seq_len = 1024
hidden = 1024
SIZE_PROFILES = {"small": {"batch_size": 2, "seq_len": 24, "hidden": 48}}


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden)]


def get_init_inputs():
    return []

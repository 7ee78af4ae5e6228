# kernelmill: level=1 op_type=single
"""1-D convolution over long sequences (e.g. audio or token features)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


batch_size = 64
in_channels = 64
out_channels = 128
kernel_size = 3
length = 4096
SIZE_PROFILES = {"small": {"batch_size": 2, "in_channels": 4, "out_channels": 8, "length": 40}}


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]

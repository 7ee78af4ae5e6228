# kernelmill: level=2 op_type=fusion
"""Conv2d, tanh, multiply by a constant, add a per-channel bias."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, scale: float):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.scale = scale
        self.bias = nn.Parameter(0.1 * torch.randn(out_channels, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.conv(x)) * self.scale + self.bias


batch_size = 32
in_channels = 16
out_channels = 64
kernel_size = 3
height = 128
width = 128
scale = 2.0
SIZE_PROFILES = {"small": {"batch_size": 2, "in_channels": 3, "out_channels": 4, "height": 8, "width": 7}}


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, scale]

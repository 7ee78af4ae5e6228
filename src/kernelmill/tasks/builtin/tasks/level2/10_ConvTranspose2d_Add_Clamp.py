# kernelmill: level=2 op_type=fusion
"""Transposed convolution, add a per-channel bias, clamp to a range."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int,
                 clamp_min: float, clamp_max: float):
        super().__init__()
        self.conv_t = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride)
        self.bias = nn.Parameter(0.1 * torch.randn(out_channels, 1, 1))
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.clamp(self.conv_t(x) + self.bias, self.clamp_min, self.clamp_max)


batch_size = 16
in_channels = 32
out_channels = 32
kernel_size = 3
stride = 2
height = 64
width = 64
clamp_min = -0.5
clamp_max = 0.5
SIZE_PROFILES = {"small": {"batch_size": 2, "in_channels": 3, "out_channels": 4, "height": 4, "width": 5}}


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, clamp_min, clamp_max]

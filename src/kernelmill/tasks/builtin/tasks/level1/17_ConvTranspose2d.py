# kernelmill: level=1 op_type=single
"""Strided transposed convolution that doubles the spatial size."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.conv_t = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv_t(x)


batch_size = 16
in_channels = 64
out_channels = 32
kernel_size = 4
stride = 2
padding = 1
height = 64
width = 64
SIZE_PROFILES = {"small": {"batch_size": 2, "in_channels": 4, "out_channels": 3, "height": 5, "width": 6}}


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding]

# kernelmill: level=2 op_type=fusion
"""Conv2d, 2x2 max pooling, sigmoid."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.pool(self.conv(x)))


batch_size = 32
in_channels = 16
out_channels = 64
kernel_size = 3
height = 130
width = 130
SIZE_PROFILES = {"small": {"batch_size": 2, "in_channels": 3, "out_channels": 4, "height": 10, "width": 9}}


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]

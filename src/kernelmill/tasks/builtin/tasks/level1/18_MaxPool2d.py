# kernelmill: level=1 op_type=single
"""3x3 max pooling, stride 2, padding 1."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


batch_size = 32
channels = 64
height = 128
width = 128
kernel_size = 3
stride = 2
padding = 1
SIZE_PROFILES = {"small": {"batch_size": 2, "channels": 3, "height": 11, "width": 10}}


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [kernel_size, stride, padding]

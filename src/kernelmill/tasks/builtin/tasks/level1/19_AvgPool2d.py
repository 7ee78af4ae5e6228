# kernelmill: level=1 op_type=single
"""3x3 average pooling with stride 2 and no padding."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int):
        super().__init__()
        self.pool = nn.AvgPool2d(kernel_size, stride=stride)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


batch_size = 32
channels = 64
height = 128
width = 128
kernel_size = 3
stride = 2
SIZE_PROFILES = {"small": {"batch_size": 2, "channels": 3, "height": 11, "width": 12}}


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [kernel_size, stride]

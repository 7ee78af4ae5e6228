# kernelmill: level=2 op_type=fusion
"""Conv2d, batch normalisation with batch statistics, then ReLU."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2, bias=False)
        self.bn_weight = nn.Parameter(1.0 + 0.2 * torch.randn(out_channels))
        self.bn_bias = nn.Parameter(0.2 * torch.randn(out_channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        x = F.batch_norm(x, None, None, self.bn_weight, self.bn_bias, training=True, eps=1e-5)
        return torch.relu(x)


batch_size = 16
in_channels = 32
out_channels = 64
kernel_size = 3
height = 128
width = 128
SIZE_PROFILES = {"small": {"batch_size": 2, "in_channels": 3, "out_channels": 4, "height": 6, "width": 7}}


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]

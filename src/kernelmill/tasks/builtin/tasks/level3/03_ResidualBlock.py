# kernelmill: level=3 op_type=network
"""ResNet basic block: conv-BN-ReLU-conv-BN, identity shortcut, ReLU.

Batch norms use batch statistics (written functionally, independent of
train()/eval()).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1_weight = nn.Parameter(1.0 + 0.1 * torch.randn(channels))
        self.bn1_bias = nn.Parameter(0.1 * torch.randn(channels))
        self.bn2_weight = nn.Parameter(1.0 + 0.1 * torch.randn(channels))
        self.bn2_bias = nn.Parameter(0.1 * torch.randn(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.batch_norm(self.conv1(x), None, None, self.bn1_weight, self.bn1_bias, training=True)
        out = torch.relu(out)
        out = F.batch_norm(self.conv2(out), None, None, self.bn2_weight, self.bn2_bias, training=True)
        return torch.relu(out + x)


batch_size = 16
channels = 64
height = 56
width = 56
SIZE_PROFILES = {"small": {"batch_size": 2, "channels": 4, "height": 6, "width": 6}}


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]

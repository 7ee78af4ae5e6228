# kernelmill: level=1 op_type=single
"""GroupNorm over channel groups of an image batch."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, num_groups: int, channels: int):
        super().__init__()
        self.norm = nn.GroupNorm(num_groups, channels, eps=1e-5)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


batch_size = 16
channels = 64
num_groups = 8
height = 128
width = 128
SIZE_PROFILES = {"small": {"batch_size": 2, "channels": 8, "num_groups": 4, "height": 5, "width": 6}}


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [num_groups, channels]

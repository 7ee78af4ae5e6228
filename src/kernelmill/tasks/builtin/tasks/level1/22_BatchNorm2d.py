# kernelmill: level=1 op_type=single
"""Batch normalisation with batch statistics (training-mode formula).

Written functionally so the result does not depend on train()/eval():
mean and biased variance are taken over (N, H, W) for each channel.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, channels: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.2 * torch.randn(channels))
        self.bias = nn.Parameter(0.2 * torch.randn(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.batch_norm(x, None, None, self.weight, self.bias, training=True, eps=self.eps)


batch_size = 32
channels = 64
height = 128
width = 128
SIZE_PROFILES = {"small": {"batch_size": 4, "channels": 3, "height": 7, "width": 6}}


def get_inputs():
    return [torch.randn(batch_size, channels, height, width) * 3.0 + 1.0]


def get_init_inputs():
    return [channels]

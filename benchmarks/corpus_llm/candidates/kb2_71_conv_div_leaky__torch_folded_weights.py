# task: kernelbench/level2/71_Conv2d_Divide_LeakyReLU.py  language: torch  device: cuda
# style: torch rewrite: the divisor folded into copies of the conv weight and bias at forward time
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, divisor):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.divisor = divisor

    def forward(self, x):
        w = self.conv.weight / self.divisor
        b = self.conv.bias / self.divisor
        return F.leaky_relu(F.conv2d(x, w, b), negative_slope=0.01)

# task: kernelbench/level2/69_Conv2d_HardSwish_ReLU.py  language: torch  device: cuda
# style: torch rewrite: in-place hardswish and relu on the conv output
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        y = self.conv(x)
        return F.relu(F.hardswish(y, inplace=True), inplace=True)

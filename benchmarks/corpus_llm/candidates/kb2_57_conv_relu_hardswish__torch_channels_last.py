# task: kernelbench/level2/57_Conv2d_ReLU_HardSwish.py  language: torch  device: cuda
# style: torch rewrite: channels_last conv with cudnn.benchmark, relu then F.hardswish
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.backends.cudnn.benchmark = True


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        y = torch.relu(self.conv(x.to(memory_format=torch.channels_last)))
        return (y * torch.clamp((y + 3) / 6, 0, 1)).contiguous()

# task: conv_div  language: torch  device: both
# style: torch rewrite, F.conv2d then an in-place divide on the fresh output
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, c_in, c_out, divisor):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, kernel_size=3)
        self.divisor = divisor

    def forward(self, x):
        return F.conv2d(x, self.conv.weight, self.conv.bias).div_(self.divisor)

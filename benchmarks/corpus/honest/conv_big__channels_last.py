# task: conv_big  language: torch  device: both
# style: channels_last, input and weight converted on every call
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, kernel_size=3, padding=1)

    def forward(self, x):
        w = self.conv.weight.contiguous(memory_format=torch.channels_last)
        y = F.conv2d(x.contiguous(memory_format=torch.channels_last), w, self.conv.bias, padding=1)
        return y.contiguous()

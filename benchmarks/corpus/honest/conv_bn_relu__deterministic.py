# task: conv_bn_relu  language: torch  device: both  fidelity: no
# style: torch.backends.cudnn.deterministic = True at import (process-wide flag)
import torch
import torch.nn as nn

torch.backends.cudnn.deterministic = True


class ModelNew(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, kernel_size=3, padding=1)
        self.bn = nn.BatchNorm2d(c_out)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.relu(self.bn(self.conv(x)))

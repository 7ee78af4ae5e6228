"""Conv2d(32 -> 64, 3x3, padding 1) -> BatchNorm2d (training mode: batch
statistics) -> ReLU on (64, 32, 64, 64) (TF32 off: about 1 ms on an H100)."""
import torch
import torch.nn as nn

BATCH = 64
C_IN = 32
C_OUT = 64
H = 64
W = 64
SIZE_PROFILES = {"small": {"BATCH": 4, "C_IN": 4, "C_OUT": 8, "H": 16, "W": 16}}


class Model(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, kernel_size=3, padding=1)
        self.bn = nn.BatchNorm2d(c_out)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


def get_inputs():
    return [torch.randn(BATCH, C_IN, H, W)]


def get_init_inputs():
    return [C_IN, C_OUT]

"""Conv2d(128 -> 256, 3x3, padding 1) on (32, 128, 128, 128): a 256 MB input
(TF32 off: about 10 ms on an H100)."""
import torch
import torch.nn as nn

BATCH = 32
C_IN = 128
C_OUT = 256
H = 128
W = 128
SIZE_PROFILES = {"small": {"BATCH": 2, "C_IN": 4, "C_OUT": 8, "H": 24, "W": 24}}


class Model(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, kernel_size=3, padding=1)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(BATCH, C_IN, H, W)]


def get_init_inputs():
    return [C_IN, C_OUT]

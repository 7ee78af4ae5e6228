"""Conv2d(64 -> 128, 3x3) on (32, 64, 128, 128), divided by a constant
(TF32 off: a few ms on an H100)."""
import torch
import torch.nn as nn

BATCH = 32
C_IN = 64
C_OUT = 128
H = 128
W = 128
DIVISOR = 2.0
SIZE_PROFILES = {"small": {"BATCH": 2, "C_IN": 4, "C_OUT": 8, "H": 24, "W": 24}}


class Model(nn.Module):
    def __init__(self, c_in, c_out, divisor):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, kernel_size=3)
        self.divisor = divisor

    def forward(self, x):
        return self.conv(x) / self.divisor


def get_inputs():
    return [torch.randn(BATCH, C_IN, H, W)]


def get_init_inputs():
    return [C_IN, C_OUT, DIVISOR]

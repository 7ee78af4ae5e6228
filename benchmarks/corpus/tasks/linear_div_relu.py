"""Linear(4096 -> 4096) on a batch of 1024, divided by a constant, then ReLU
(TF32 off: about 0.8 ms on an H100)."""
import torch
import torch.nn as nn

BATCH = 1024
IN_F = 4096
OUT_F = 4096
DIVISOR = 2.5
SIZE_PROFILES = {"small": {"BATCH": 64, "IN_F": 256, "OUT_F": 256}}


class Model(nn.Module):
    def __init__(self, in_f, out_f, divisor):
        super().__init__()
        self.linear = nn.Linear(in_f, out_f)
        self.divisor = divisor

    def forward(self, x):
        return torch.relu(self.linear(x) / self.divisor)


def get_inputs():
    return [torch.randn(BATCH, IN_F)]


def get_init_inputs():
    return [IN_F, OUT_F, DIVISOR]

"""MaxPool2d(2) then ReLU on (32, 64, 128, 128) (about 0.2 ms on an H100)."""
import torch
import torch.nn as nn

BATCH = 32
C = 64
H = 128
W = 128
SIZE_PROFILES = {"small": {"BATCH": 2, "C": 8, "H": 32, "W": 32}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool2d(2)

    def forward(self, x):
        return torch.relu(self.pool(x))


def get_inputs():
    return [torch.randn(BATCH, C, H, W)]


def get_init_inputs():
    return []

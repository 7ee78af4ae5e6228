"""x * sigmoid(x) on 4M floats, written as two ops (about 40 us on an H100)."""
import torch
import torch.nn as nn

N = 1 << 22
SIZE_PROFILES = {"small": {"N": 262144}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x * torch.sigmoid(x)


def get_inputs():
    return [torch.randn(N)]


def get_init_inputs():
    return []

"""ReLU on 64K floats: a launch-bound op (about 5 us on an H100)."""
import torch
import torch.nn as nn

N = 65536
SIZE_PROFILES = {"small": {"N": 65536}}


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(N)]


def get_init_inputs():
    return []

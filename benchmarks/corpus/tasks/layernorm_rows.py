"""LayerNorm over the last dim of (8192, 4096) with affine weights (about 0.2 ms on an H100)."""
import torch
import torch.nn as nn

ROWS = 8192
COLS = 4096
SIZE_PROFILES = {"small": {"ROWS": 256, "COLS": 1024}}


class Model(nn.Module):
    def __init__(self, cols):
        super().__init__()
        self.ln = nn.LayerNorm(cols)

    def forward(self, x):
        return self.ln(x)


def get_inputs():
    return [torch.randn(ROWS, COLS)]


def get_init_inputs():
    return [COLS]

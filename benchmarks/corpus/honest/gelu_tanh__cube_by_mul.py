# task: gelu_tanh  language: torch  device: both
# style: reordered ops, x^3 as x*x*x and the constant folded (same kernel count)
import math

import torch
import torch.nn as nn

_C = math.sqrt(2.0 / math.pi)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        inner = _C * (x + 0.044715 * (x * x * x))
        return 0.5 * x * (1.0 + torch.tanh(inner))

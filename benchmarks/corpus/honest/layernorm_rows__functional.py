# task: layernorm_rows  language: torch  device: both
# style: torch rewrite, F.layer_norm with the module's own parameters
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, cols):
        super().__init__()
        self.ln = nn.LayerNorm(cols)

    def forward(self, x):
        return F.layer_norm(x, self.ln.normalized_shape, self.ln.weight, self.ln.bias, self.ln.eps)

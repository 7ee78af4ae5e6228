# task: layernorm_rows  language: torch  device: both
# style: torch rewrite, a slower hand-written mean/variance normalisation
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, cols):
        super().__init__()
        self.ln = nn.LayerNorm(cols)

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
        return (x - mean) / torch.sqrt(var + self.ln.eps) * self.ln.weight + self.ln.bias

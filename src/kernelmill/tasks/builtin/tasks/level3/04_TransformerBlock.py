# kernelmill: level=3 op_type=network
"""Pre-norm transformer encoder block: multi-head self-attention and a GELU MLP."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, d_model: int, num_heads: int, mlp_ratio: int):
        super().__init__()
        self.num_heads = num_heads
        self.ln1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out_proj = nn.Linear(d_model, d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.fc1 = nn.Linear(d_model, mlp_ratio * d_model)
        self.fc2 = nn.Linear(mlp_ratio * d_model, d_model)

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        hd = d // self.num_heads
        q, k, v = self.qkv(x).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.num_heads, hd).transpose(1, 2) for z in (q, k, v))
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(hd), dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(b, t, d)
        return self.out_proj(out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.ln1(x))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


batch_size = 8
seq_len = 512
d_model = 768
num_heads = 12
mlp_ratio = 4
SIZE_PROFILES = {"small": {"batch_size": 1, "seq_len": 8, "d_model": 32, "num_heads": 4, "mlp_ratio": 2}}


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model)]


def get_init_inputs():
    return [d_model, num_heads, mlp_ratio]

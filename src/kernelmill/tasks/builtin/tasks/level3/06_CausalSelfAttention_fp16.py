# kernelmill: level=3 op_type=network
"""Half-precision causal multi-head self-attention layer (QKV projection,
masked softmax attention, output projection)."""
import math

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, d_model: int, num_heads: int):
        super().__init__()
        self.num_heads = num_heads
        self.qkv = nn.Linear(d_model, 3 * d_model, dtype=torch.float16)
        self.out_proj = nn.Linear(d_model, d_model, dtype=torch.float16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        hd = d // self.num_heads
        q, k, v = self.qkv(x).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.num_heads, hd).transpose(1, 2) for z in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
        causal = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
        weights = torch.softmax(scores.masked_fill(causal, float("-inf")), dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(b, t, d)
        return self.out_proj(out)


batch_size = 8
seq_len = 1024
d_model = 1024
num_heads = 16
SIZE_PROFILES = {"small": {"batch_size": 1, "seq_len": 8, "d_model": 32, "num_heads": 4}}


def get_inputs():
    return [torch.randn(batch_size, seq_len, d_model, dtype=torch.float16)]


def get_init_inputs():
    return [d_model, num_heads]

# kernelmill: level=2 op_type=fusion
"""Attention-score epilogue: scale, causal mask, softmax over keys."""
import math

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, head_dim: int):
        super().__init__()
        self.scale = 1.0 / math.sqrt(head_dim)

    def forward(self, scores: torch.Tensor) -> torch.Tensor:
        q_len, k_len = scores.shape[-2], scores.shape[-1]
        causal = torch.ones(q_len, k_len, dtype=torch.bool, device=scores.device).triu(1)
        scores = (scores * self.scale).masked_fill(causal, float("-inf"))
        return torch.softmax(scores, dim=-1)


batch_size = 16
num_heads = 16
seq_len = 512
head_dim = 64
SIZE_PROFILES = {"small": {"batch_size": 1, "num_heads": 2, "seq_len": 12}}


def get_inputs():
    return [torch.randn(batch_size, num_heads, seq_len, seq_len) * 8.0]


def get_init_inputs():
    return [head_dim]

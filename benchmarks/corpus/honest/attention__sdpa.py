# task: attention  language: torch  device: both
# style: F.scaled_dot_product_attention for the hand-written attention
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v)

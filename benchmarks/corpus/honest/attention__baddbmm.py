# task: attention  language: torch  device: both
# style: matmul via baddbmm with the 1/sqrt(d) scale as alpha, batch and heads flattened
import math

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k, v):
        b, h, s, d = q.shape
        q3 = q.reshape(b * h, s, d)
        k3 = k.reshape(b * h, s, d)
        v3 = v.reshape(b * h, s, d)
        empty = torch.empty(b * h, s, s, device=q.device, dtype=q.dtype)
        scores = torch.baddbmm(empty, q3, k3.transpose(1, 2), beta=0.0, alpha=1.0 / math.sqrt(d))
        return torch.bmm(torch.softmax(scores, dim=-1), v3).reshape(b, h, s, d)

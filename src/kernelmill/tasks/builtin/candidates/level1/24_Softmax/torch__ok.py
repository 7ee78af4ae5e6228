# Softmax as exp(x - logsumexp(x)); expected verdict: ok.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.exp(x - torch.logsumexp(x, dim=-1, keepdim=True))

# kernelmill: level=2 op_type=fusion
"""Projection without bias, divide by a temperature, log-sum-exp per row."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int, temperature: float):
        super().__init__()
        self.proj = nn.Linear(in_features, out_features, bias=False)
        self.temperature = temperature

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.logsumexp(self.proj(x) / self.temperature, dim=1)


batch_size = 2048
in_features = 4096
out_features = 4096
temperature = 0.7
SIZE_PROFILES = {"small": {"batch_size": 5, "in_features": 24, "out_features": 30}}


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, temperature]

# kernelmill: level=2 op_type=fusion
"""Linear layer, sigmoid, then a sum over features (one value per row)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.gemm(x)).sum(dim=1, keepdim=True)


batch_size = 1024
in_features = 4096
out_features = 2048
SIZE_PROFILES = {"small": {"batch_size": 4, "in_features": 20, "out_features": 36}}


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]

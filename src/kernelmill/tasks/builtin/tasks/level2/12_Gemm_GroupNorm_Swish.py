# kernelmill: level=2 op_type=fusion
"""Linear layer, GroupNorm over feature groups, swish."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int, num_groups: int):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.norm = nn.GroupNorm(num_groups, out_features)
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.norm(self.gemm(x))
        return x * torch.sigmoid(x)


batch_size = 1024
in_features = 2048
out_features = 4096
num_groups = 32
SIZE_PROFILES = {"small": {"batch_size": 4, "in_features": 16, "out_features": 32, "num_groups": 4}}


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, num_groups]

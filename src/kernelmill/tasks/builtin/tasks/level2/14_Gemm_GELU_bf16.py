# kernelmill: level=2 op_type=fusion
"""bfloat16 linear layer followed by tanh-approximated GELU."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, dtype=torch.bfloat16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(self.gemm(x), approximate="tanh")


batch_size = 2048
in_features = 4096
out_features = 4096
SIZE_PROFILES = {"small": {"batch_size": 4, "in_features": 32, "out_features": 24}}


def get_inputs():
    return [torch.randn(batch_size, in_features, dtype=torch.bfloat16)]


def get_init_inputs():
    return [in_features, out_features]

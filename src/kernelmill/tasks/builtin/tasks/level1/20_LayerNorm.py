# kernelmill: level=1 op_type=single
"""LayerNorm over the hidden dimension, with a learned (non-trivial) affine."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.norm = nn.LayerNorm(hidden, eps=1e-5)
        # ones/zeros would let a kernel that skips the affine pass the check
        with torch.no_grad():
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


batch_size = 32
seq_len = 256
hidden = 4096
SIZE_PROFILES = {"small": {"batch_size": 2, "seq_len": 4, "hidden": 96}}


def get_inputs():
    return [torch.randn(batch_size, seq_len, hidden) * 2.0 + 0.5]


def get_init_inputs():
    return [hidden]

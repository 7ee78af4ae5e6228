import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        # one fused call writing into a preallocated output; for longer chains
        # of ops, fuse them (torch.addcmul, torch.baddbmm, in-place ops) the same way
        return torch.add(a, b, out=torch.empty_like(a))

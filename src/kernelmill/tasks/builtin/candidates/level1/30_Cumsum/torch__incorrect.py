# An exclusive scan where the task asks for an inclusive one: every output
# lacks its own element. Expected verdict: incorrect.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=1) - x

# Row sum that drops keepdim: the values are right but the shape is (rows,)
# instead of (rows, 1). Expected verdict: incorrect (shape mismatch).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.sum(dim=-1)

# ReLU that assumes the element count is a multiple of 3 (it is not, in any
# profile of the task), so the view raises at run time.
# Expected verdict: runtime_error.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        triples = x.view(-1, 3)
        return triples.clamp_min(0.0).view_as(x)

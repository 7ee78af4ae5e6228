# A forward pass that never returns (a convergence loop whose condition can
# never hold). Expected verdict: timeout; the harness must kill it.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        delta = 1.0
        while delta >= 0.0:  # BUG: |change| is never negative, so this spins forever
            y = torch.relu(y)
            delta = float((y - torch.relu(y)).abs().sum())
        return y

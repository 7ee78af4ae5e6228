# kernelmill: level=1 op_type=single
"""Smooth L1 (Huber-like) loss with beta = 1, mean reduction."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, beta: float):
        super().__init__()
        self.beta = beta

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.smooth_l1_loss(predictions, targets, beta=self.beta)


batch_size = 8192
dim = 4096
beta = 1.0
SIZE_PROFILES = {"small": {"batch_size": 16, "dim": 100}}


def get_inputs():
    return [torch.randn(batch_size, dim) * 2.0, torch.randn(batch_size, dim)]


def get_init_inputs():
    return [beta]

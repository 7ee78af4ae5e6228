# kernelmill: level=1 op_type=single
"""KL divergence between two categorical distributions, batchmean reduction.

Inputs: log-probabilities of the model and probabilities of the target.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, log_probs: torch.Tensor, target_probs: torch.Tensor) -> torch.Tensor:
        return F.kl_div(log_probs, target_probs, reduction="batchmean")


batch_size = 4096
num_classes = 8192
SIZE_PROFILES = {"small": {"batch_size": 8, "num_classes": 64}}


def get_inputs():
    log_probs = torch.log_softmax(torch.randn(batch_size, num_classes), dim=-1)
    target_probs = torch.softmax(torch.randn(batch_size, num_classes), dim=-1)
    return [log_probs, target_probs]


def get_init_inputs():
    return []

# task: builtin/level1/26_MSELoss.py  language: torch  device: both
# style: torch rewrite: F.mse_loss
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return F.mse_loss(predictions, targets)

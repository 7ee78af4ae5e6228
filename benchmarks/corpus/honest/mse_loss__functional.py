# task: mse_loss  language: torch  device: both
# style: fused op, F.mse_loss
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return F.mse_loss(a, b)

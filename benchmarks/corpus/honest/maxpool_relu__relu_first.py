# task: maxpool_relu  language: torch  device: both
# style: reordered ops, a slower relu before the pool (relu on four times the elements)
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.max_pool2d(torch.relu(x), 2)

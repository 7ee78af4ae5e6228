# task: linear_div_relu  language: torch  device: both
# style: weights transformed at init, the divisor folded into new parameters
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, in_f, out_f, divisor):
        super().__init__()
        linear = nn.Linear(in_f, out_f)  # built under the seed exactly as the reference builds it
        self.weight_scaled = nn.Parameter(linear.weight.detach() / divisor)
        self.bias_scaled = nn.Parameter(linear.bias.detach() / divisor)

    def forward(self, x):
        return torch.relu(F.linear(x, self.weight_scaled, self.bias_scaled))

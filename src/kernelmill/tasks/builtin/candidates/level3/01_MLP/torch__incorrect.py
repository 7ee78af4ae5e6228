# The MLP with a ReLU after the output layer too, which zeroes every
# negative logit. Expected verdict: incorrect.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, input_size: int, hidden_sizes: list, output_size: int):
        super().__init__()
        layers = []
        width = input_size
        for h in hidden_sizes:
            layers += [nn.Linear(width, h), nn.ReLU()]
            width = h
        layers.append(nn.Linear(width, output_size))
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.net:
            if isinstance(layer, nn.Linear):
                x = F.relu(F.linear(x, layer.weight, layer.bias))  # BUG: no ReLU after the last layer
        return x

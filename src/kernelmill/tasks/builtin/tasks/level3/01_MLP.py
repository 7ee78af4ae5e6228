# kernelmill: level=3 op_type=network
"""Multi-layer perceptron: Linear + ReLU blocks and a final Linear."""
import torch
import torch.nn as nn


class Model(nn.Module):
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
        return self.net(x)


batch_size = 256
input_size = 4096
hidden_sizes = [4096, 4096]
output_size = 1024
SIZE_PROFILES = {"small": {"batch_size": 2, "input_size": 16, "hidden_sizes": [32, 24], "output_size": 8}}


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_sizes, output_size]

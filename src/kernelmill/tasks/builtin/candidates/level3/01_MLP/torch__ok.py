# The MLP with the layers applied by hand (F.linear + in-place ReLU) over the
# same nn.Sequential, built in the same order, so under the same seed its
# weights equal the reference's; expected verdict: ok.
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
        linears = [m for m in self.net if isinstance(m, nn.Linear)]
        for layer in linears[:-1]:
            x = F.linear(x, layer.weight, layer.bias).relu_()
        last = linears[-1]
        return F.linear(x, last.weight, last.bias)

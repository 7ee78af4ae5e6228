# task: builtin/level3/01_MLP.py  language: torch  device: both
# style: torch rewrite: addmm per layer with in-place relu_
# expect: ok
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

    def forward(self, x):
        h = x
        linears = [m for m in self.net if isinstance(m, nn.Linear)]
        for i, lin in enumerate(linears):
            h = torch.addmm(lin.bias, h, lin.weight.t())
            if i < len(linears) - 1:
                h = h.relu_()
        return h

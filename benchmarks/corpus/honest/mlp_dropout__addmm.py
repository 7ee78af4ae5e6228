# task: mlp_dropout  language: torch  device: both
# style: matmul via addmm, the p=0 dropout kept as the module the reference has
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, d, hidden):
        super().__init__()
        self.fc1 = nn.Linear(d, hidden)
        self.act = nn.GELU()
        self.drop = nn.Dropout(p=0.0)
        self.fc2 = nn.Linear(hidden, d)

    def forward(self, x):
        h = F.gelu(torch.addmm(self.fc1.bias, x, self.fc1.weight.t()))
        return torch.addmm(self.fc2.bias, self.drop(h), self.fc2.weight.t())

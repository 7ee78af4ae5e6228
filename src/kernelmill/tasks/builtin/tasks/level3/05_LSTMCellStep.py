# kernelmill: level=3 op_type=network
"""One LSTM cell step; returns the new hidden and cell state stacked as (2, batch, hidden)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, input_size: int, hidden_size: int):
        super().__init__()
        self.cell = nn.LSTMCell(input_size, hidden_size)

    def forward(self, x: torch.Tensor, h: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        h_next, c_next = self.cell(x, (h, c))
        return torch.stack((h_next, c_next))


batch_size = 1024
input_size = 1024
hidden_size = 2048
SIZE_PROFILES = {"small": {"batch_size": 3, "input_size": 8, "hidden_size": 16}}


def get_inputs():
    return [torch.randn(batch_size, input_size), torch.randn(batch_size, hidden_size),
            torch.randn(batch_size, hidden_size)]


def get_init_inputs():
    return [input_size, hidden_size]


import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)

batch, dim = 64, 128
SHAPE_VARIANTS = [{"batch": 7}, {"batch": 130}]

def get_inputs():
    return [torch.randn(batch, dim)]

def get_init_inputs():
    return []


import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return x * 1e-6

def get_inputs():
    return [torch.randn(32, 32)]

def get_init_inputs():
    return []

import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, a, b):
        return a @ b

def get_inputs():
    return [torch.randn(512, 512), torch.randn(512, 512)]

def get_init_inputs():
    return []

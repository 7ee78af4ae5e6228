# task: kernelbench/level2/86_Matmul_Divide_GELU.py  language: torch  device: cuda
# style: torch rewrite: the division folded into addmm's alpha and a scaled bias
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, input_size, output_size, divisor):
        super().__init__()
        self.linear = nn.Linear(input_size, output_size)
        self.divisor = divisor

    def forward(self, x):
        y = torch.addmm(self.linear.bias / self.divisor, x, self.linear.weight.t(), alpha=1.0 / self.divisor)
        return F.gelu(y)

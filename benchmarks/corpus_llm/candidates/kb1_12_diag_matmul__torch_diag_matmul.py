# task: kernelbench/level1/12_Matmul_with_diagonal_matrices_.py  language: torch  device: cuda
# style: torch rewrite: literal diag(A) @ B (builds the dense diagonal, slow but correct)
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.diag(A) @ B

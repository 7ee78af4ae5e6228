# task: kernelbench/level1/12_Matmul_with_diagonal_matrices_.py  language: torch  device: cuda
# style: torch rewrite: broadcasting multiply with A[:, None]
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return B * A[:, None]

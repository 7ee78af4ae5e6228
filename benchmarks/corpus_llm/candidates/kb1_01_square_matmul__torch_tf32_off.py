# task: kernelbench/level1/1_Square_matrix_multiplication_.py  language: torch  device: cuda
# style: torch rewrite: torch.mm with TF32 explicitly off at import
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.mm(A, B)

# task: conv_big  language: torch  device: both  fidelity: no
# style: torch.backends.cudnn.benchmark = True at import (process-wide: it would also change the reference's algorithm in a one-process measurement)
import torch
import torch.nn as nn

torch.backends.cudnn.benchmark = True


class ModelNew(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, kernel_size=3, padding=1)

    def forward(self, x):
        return self.conv(x)

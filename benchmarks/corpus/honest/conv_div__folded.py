# task: conv_div  language: torch  device: both
# style: weights transformed at init, the divisor folded into the conv weight in place
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, c_in, c_out, divisor):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, kernel_size=3)
        with torch.no_grad():
            self.conv.weight.div_(divisor)
            self.conv.bias.div_(divisor)

    def forward(self, x):
        return self.conv(x)

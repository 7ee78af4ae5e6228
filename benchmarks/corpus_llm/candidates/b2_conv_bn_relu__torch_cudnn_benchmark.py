# task: builtin/level2/02_Conv2d_BatchNorm_ReLU.py  language: torch  device: both
# style: torch rewrite: torch.backends.cudnn.benchmark = True at import, relu in place
# expect: ok
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.backends.cudnn.benchmark = True


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2, bias=False)
        self.bn_weight = nn.Parameter(1.0 + 0.2 * torch.randn(out_channels))
        self.bn_bias = nn.Parameter(0.2 * torch.randn(out_channels))

    def forward(self, x):
        x = self.conv(x)
        x = F.batch_norm(x, None, None, self.bn_weight, self.bn_bias, training=True, eps=1e-5)
        return F.relu(x, inplace=True)

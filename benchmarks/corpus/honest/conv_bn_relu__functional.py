# task: conv_bn_relu  language: torch  device: both
# style: BatchNorm in training mode kept (batch statistics), F.batch_norm + in-place relu
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, kernel_size=3, padding=1)
        self.bn = nn.BatchNorm2d(c_out)

    def forward(self, x):
        y = F.conv2d(x, self.conv.weight, self.conv.bias, padding=1)
        bn = self.bn
        y = F.batch_norm(y, bn.running_mean, bn.running_var, bn.weight, bn.bias,
                         training=bn.training or bn.running_mean is None, momentum=bn.momentum, eps=bn.eps)
        return F.relu(y, inplace=True)

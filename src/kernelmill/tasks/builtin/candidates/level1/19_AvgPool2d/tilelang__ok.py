"""TileLang seed for level1/19_AvgPool2d: nn.AvgPool2d(3, stride=2) on NCHW fp32 (no padding).

PyTorch -> TileLang:
  each (n, c) plane      -> one T.Kernel block
  each pooled output     -> one iteration of a T.Parallel loop over the (OH, OW) outputs
  the 3x3 window mean    -> the nine taps summed in the reference's row-major order, * 1/9
                            (a compile-time constant); no padding, so every tap is in bounds
"""
import torch
import torch.nn as nn
import tilelang
import tilelang.language as T


def avgpool3_kernel(planes: int, H: int, W: int, stride: int, target=None):
    OH, OW = (H - 3) // stride + 1, (W - 3) // stride + 1

    @T.prim_func
    def avg_pool3(X: T.Tensor((planes, H, W), "float32"), Y: T.Tensor((planes, OH, OW), "float32")):
        with T.Kernel(planes, threads=256) as p:
            for oy, ox in T.Parallel(OH, OW):
                y0 = oy * stride
                x0 = ox * stride
                s = (X[p, y0, x0] + X[p, y0, x0 + 1] + X[p, y0, x0 + 2]
                     + X[p, y0 + 1, x0] + X[p, y0 + 1, x0 + 1] + X[p, y0 + 1, x0 + 2]
                     + X[p, y0 + 2, x0] + X[p, y0 + 2, x0 + 1] + X[p, y0 + 2, x0 + 2])
                Y[p, oy, ox] = s * (1.0 / 9.0)

    return tilelang.compile(avg_pool3, out_idx=[1], target=target)


CHECK = [(avgpool3_kernel, {"planes": 32 * 64, "H": 128, "W": 128, "stride": 2})]


class ModelNew(nn.Module):
    def __init__(self, kernel_size: int, stride: int):
        super().__init__()
        if kernel_size != 3:
            raise ValueError("this kernel is written for 3x3 windows")
        self.stride = stride
        self._kernels = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, c, h, w = x.shape
        key = (n * c, h, w)
        if key not in self._kernels:
            self._kernels[key] = avgpool3_kernel(*key, self.stride)
        y = self._kernels[key](x.contiguous().view(key))
        return y.view(n, c, y.shape[1], y.shape[2])

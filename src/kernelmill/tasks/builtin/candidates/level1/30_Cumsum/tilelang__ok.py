"""TileLang seed for level1/30_Cumsum: torch.cumsum(x, dim=1) over rows of 4096.

PyTorch -> TileLang:
  one scan per row          -> one T.Kernel block per row
  the row                   -> T.copy into a (1, length) T.alloc_shared buffer (16 KiB)
  cumsum along dim 1        -> T.cumsum(buf, dim=1): TileLang's block-wide inclusive scan
  the result                -> T.copy from shared memory back to y
"""
import torch
import torch.nn as nn
import tilelang
import tilelang.language as T


def cumsum_kernel(rows: int, length: int, target=None):
    @T.prim_func
    def row_cumsum(X: T.Tensor((rows, length), "float32"), Y: T.Tensor((rows, length), "float32")):
        with T.Kernel(rows, threads=256) as r:
            buf = T.alloc_shared((1, length), "float32")
            T.copy(X[r, 0], buf)
            T.cumsum(buf, dim=1)
            T.copy(buf, Y[r, 0])

    return tilelang.compile(row_cumsum, out_idx=[1], target=target)


CHECK = [(cumsum_kernel, {"rows": 2048, "length": 4096})]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._kernels = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        key = tuple(x.shape)
        if key not in self._kernels:
            self._kernels[key] = cumsum_kernel(*key)
        return self._kernels[key](x.contiguous())

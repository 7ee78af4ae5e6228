"""TileLang seed for level1/25_LogSoftmax: torch.log_softmax(x, dim=1) over rows of 8192.

PyTorch -> TileLang:
  one row per block                -> T.Kernel(rows, threads=256)
  the row in registers             -> a (1, cols) T.alloc_fragment filled by T.copy (one read)
  max(x)                           -> T.reduce_max
  sum(exp(x - max))                -> T.exp into a second fragment, T.reduce_sum
  x - max - log(sum)               -> T.Parallel loop with T.log, then T.copy to y
"""
import torch
import torch.nn as nn
import tilelang
import tilelang.language as T


def log_softmax_kernel(rows: int, cols: int, target=None):
    @T.prim_func
    def row_log_softmax(X: T.Tensor((rows, cols), "float32"), Y: T.Tensor((rows, cols), "float32")):
        with T.Kernel(rows, threads=256) as r:
            x = T.alloc_fragment((1, cols), "float32")
            e = T.alloc_fragment((1, cols), "float32")
            m = T.alloc_fragment((1,), "float32")
            s = T.alloc_fragment((1,), "float32")
            T.copy(X[r, 0], x)
            T.reduce_max(x, m, dim=1)
            for i, j in T.Parallel(1, cols):
                e[i, j] = T.exp(x[i, j] - m[i])
            T.reduce_sum(e, s, dim=1)
            for i, j in T.Parallel(1, cols):
                x[i, j] = x[i, j] - m[i] - T.log(s[i])
            T.copy(x, Y[r, 0])

    return tilelang.compile(row_log_softmax, out_idx=[1], target=target)


CHECK = [(log_softmax_kernel, {"rows": 4096, "cols": 8192})]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._kernels = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        key = tuple(x.shape)
        if key not in self._kernels:
            self._kernels[key] = log_softmax_kernel(*key)
        return self._kernels[key](x.contiguous())

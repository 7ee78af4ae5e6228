"""TileLang seed for level1/24_Softmax: torch.softmax(x, dim=-1) over rows of 8192.

PyTorch -> TileLang:
  one softmax per row         -> one T.Kernel block (256 threads) per row
  the row                     -> a (1, cols) T.alloc_fragment: T.copy from global memory puts
                                 cols/256 values in each thread's registers (one read of x)
  max(x) (for stability)      -> T.reduce_max over the fragment
  exp(x - max)                -> T.exp in a T.Parallel loop, in place
  sum(exp)                    -> T.reduce_sum
  / sum                       -> a multiply by 1/sum in a T.Parallel loop, then T.copy to y
fp32 throughout; the max subtraction keeps the x*30 inputs from overflowing.
"""
import torch
import torch.nn as nn
import tilelang
import tilelang.language as T


def softmax_kernel(rows: int, cols: int, target=None):
    @T.prim_func
    def row_softmax(X: T.Tensor((rows, cols), "float32"), Y: T.Tensor((rows, cols), "float32")):
        with T.Kernel(rows, threads=256) as r:
            x = T.alloc_fragment((1, cols), "float32")
            m = T.alloc_fragment((1,), "float32")
            s = T.alloc_fragment((1,), "float32")
            T.copy(X[r, 0], x)
            T.reduce_max(x, m, dim=1)
            for i, j in T.Parallel(1, cols):
                x[i, j] = T.exp(x[i, j] - m[i])
            T.reduce_sum(x, s, dim=1)
            for i, j in T.Parallel(1, cols):
                x[i, j] = x[i, j] / s[i]
            T.copy(x, Y[r, 0])

    return tilelang.compile(row_softmax, out_idx=[1], target=target)


CHECK = [(softmax_kernel, {"rows": 4096, "cols": 8192})]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._kernels = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        cols = x.shape[-1]
        key = (x.numel() // cols, cols)
        if key not in self._kernels:
            self._kernels[key] = softmax_kernel(*key)
        return self._kernels[key](x.contiguous().view(key)).view(x.shape)

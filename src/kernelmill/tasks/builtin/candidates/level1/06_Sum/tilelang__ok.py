"""TileLang seed for level1/06_Sum: torch.sum(x, dim=-1, keepdim=True) over rows of 8192.

PyTorch -> TileLang:
  one output per row            -> one T.Kernel block per row (grid = rows)
  the running sum over the row  -> a (1, BLK) T.alloc_fragment accumulator: each of the 256
                                   threads adds its strided share of the row (T.Parallel inside
                                   a T.serial loop over BLK-wide chunks), reading coalesced
  the final sum                 -> T.reduce_sum over the fragment (warp shuffles + shared memory)
  keepdim=True                  -> the output buffer is (rows, 1)
fp32 throughout, as the reference.
"""
import torch
import torch.nn as nn
import tilelang
import tilelang.language as T

BLK = 1024


def row_sum_kernel(rows: int, cols: int, target=None):
    if cols % BLK:
        raise ValueError(f"row_sum_kernel: {cols} columns is not a multiple of {BLK}")

    @T.prim_func
    def row_sum(X: T.Tensor((rows, cols), "float32"), Y: T.Tensor((rows, 1), "float32")):
        with T.Kernel(rows, threads=256) as r:
            acc = T.alloc_fragment((1, BLK), "float32")
            total = T.alloc_fragment((1,), "float32")
            T.clear(acc)
            for k in T.serial(cols // BLK):
                for i, j in T.Parallel(1, BLK):
                    acc[i, j] += X[r, k * BLK + j]
            T.reduce_sum(acc, total, dim=1)
            Y[r, 0] = total[0]

    return tilelang.compile(row_sum, out_idx=[1], target=target)


CHECK = [(row_sum_kernel, {"rows": 8192, "cols": 8192})]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._kernels = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        cols = x.shape[-1]
        rows = x.numel() // cols
        key = (rows, cols)
        if key not in self._kernels:
            self._kernels[key] = row_sum_kernel(rows, cols)
        return self._kernels[key](x.contiguous().view(rows, cols)).view(*x.shape[:-1], 1)

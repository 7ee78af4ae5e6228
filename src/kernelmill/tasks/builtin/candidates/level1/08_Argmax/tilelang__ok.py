"""TileLang seed for level1/08_Argmax: torch.argmax(x, dim=1) over rows of 4096 (int64 out).

PyTorch -> TileLang:
  one index per row             -> one T.Kernel block per row
  running (max, index) pairs    -> two (1, BLK) T.alloc_fragment buffers; each thread scans its
                                   strided share of the row in a T.serial loop, keeping the first
                                   index of its largest value (strict >, so ties keep the earlier)
  the row's max                 -> T.reduce_max over the values
  first index holding the max   -> indices of slots whose value equals the max (others: cols),
                                   then T.reduce_min, so ties resolve to the lowest index as torch does
  int64 result                  -> an "int64" output tensor
"""
import torch
import torch.nn as nn
import tilelang
import tilelang.language as T

BLK = 256


def argmax_kernel(rows: int, cols: int, target=None):
    if cols % BLK:
        raise ValueError(f"argmax_kernel: {cols} columns is not a multiple of {BLK}")

    @T.prim_func
    def row_argmax(X: T.Tensor((rows, cols), "float32"), Y: T.Tensor((rows,), "int64")):
        with T.Kernel(rows, threads=256) as r:
            best = T.alloc_fragment((1, BLK), "float32")
            where = T.alloc_fragment((1, BLK), "int32")
            m = T.alloc_fragment((1,), "float32")
            first = T.alloc_fragment((1,), "int32")
            T.fill(best, -T.infinity("float32"))
            T.fill(where, 0)
            for k in T.serial(cols // BLK):
                for i, j in T.Parallel(1, BLK):
                    v = X[r, k * BLK + j]
                    if v > best[i, j]:
                        best[i, j] = v
                        where[i, j] = k * BLK + j
            T.reduce_max(best, m, dim=1)
            for i, j in T.Parallel(1, BLK):
                where[i, j] = T.if_then_else(best[i, j] == m[i], where[i, j], cols)
            T.reduce_min(where, first, dim=1)
            Y[r] = T.Cast("int64", first[0])

    return tilelang.compile(row_argmax, out_idx=[1], target=target)


CHECK = [(argmax_kernel, {"rows": 8192, "cols": 4096})]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._kernels = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        key = tuple(x.shape)
        if key not in self._kernels:
            self._kernels[key] = argmax_kernel(*key)
        return self._kernels[key](x.contiguous())

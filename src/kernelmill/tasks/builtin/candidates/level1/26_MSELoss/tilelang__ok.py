"""TileLang seed for level1/26_MSELoss: torch.mean((predictions - targets) ** 2).

PyTorch -> TileLang:
  (p - t) ** 2          -> (p - q) * (p - q) inside the accumulation loop
  the sum over all elements -> two kernels, no atomics (so every call gives the same bits):
      1. row_partials: one T.Kernel block per row; a (1, BLK) T.alloc_fragment accumulates the
         pointwise term over the row in a T.serial loop of T.Parallel chunks, T.reduce_sum
         gives the row's partial sum
      2. finish: one block sums the row partials the same way and applies the scale (1 / numel: the mean)
  the 0-dim result          -> a (1,) output viewed as a scalar tensor
fp32 throughout, as the reference.
"""
import torch
import torch.nn as nn
import tilelang
import tilelang.language as T

BLK = 1024


def row_partials_kernel(rows: int, cols: int, target=None):
    if cols % BLK:
        raise ValueError(f"row_partials_kernel: {cols} columns is not a multiple of {BLK}")

    @T.prim_func
    def row_partials(P: T.Tensor((rows, cols), "float32"), Q: T.Tensor((rows, cols), "float32"),
                     S: T.Tensor((rows,), "float32")):
        with T.Kernel(rows, threads=256) as r:
            acc = T.alloc_fragment((1, BLK), "float32")
            total = T.alloc_fragment((1,), "float32")
            T.clear(acc)
            for k in T.serial(cols // BLK):
                for i, j in T.Parallel(1, BLK):
                    p = P[r, k * BLK + j]
                    q = Q[r, k * BLK + j]
                    acc[i, j] += (p - q) * (p - q)
            T.reduce_sum(acc, total, dim=1)
            S[r] = total[0]

    return tilelang.compile(row_partials, out_idx=[2], target=target)


def finish_kernel(rows: int, scale: float, target=None):
    """sum(S) * scale in one block (rows a multiple of 256)."""
    if rows % 256:
        raise ValueError(f"finish_kernel: {rows} partials is not a multiple of 256")

    @T.prim_func
    def finish(S: T.Tensor((rows,), "float32"), Out: T.Tensor((1,), "float32")):
        with T.Kernel(1, threads=256) as _:
            acc = T.alloc_fragment((1, 256), "float32")
            total = T.alloc_fragment((1,), "float32")
            T.clear(acc)
            for k in T.serial(rows // 256):
                for i, j in T.Parallel(1, 256):
                    acc[i, j] += S[k * 256 + j]
            T.reduce_sum(acc, total, dim=1)
            Out[0] = total[0] * scale

    return tilelang.compile(finish, out_idx=[1], target=target)


CHECK = [(row_partials_kernel, {"rows": 8192, "cols": 4096}),
         (finish_kernel, {"rows": 8192, "scale": 1.0 / (8192 * 4096)})]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._kernels = {}

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        cols = a.shape[-1]
        rows = a.numel() // cols
        key = (rows, cols)
        if key not in self._kernels:
            self._kernels[key] = (row_partials_kernel(rows, cols), finish_kernel(rows, 1.0 / (rows * cols)))
        partials, finish = self._kernels[key]
        s = partials(a.contiguous().view(rows, cols), b.contiguous().view(rows, cols))
        return finish(s).view(())

"""TileLang seed for level1/07_Max: torch.max(x, dim=1).values for x of shape (B, D1, D2).

PyTorch -> TileLang:
  reduce over the middle dim     -> a 2-D grid of T.Kernel blocks: (batch, BN-wide column strip)
  running max down the columns   -> a (BK, BN) T.alloc_fragment filled with -inf, updated with
                                    T.max in a T.Parallel loop over each (BK, BN) tile of rows;
                                    threads of a warp read adjacent columns (coalesced)
  the final max over BK partials -> T.reduce_max(acc, out, dim=0)
  .values                        -> only the values are written (no index)
"""
import torch
import torch.nn as nn
import tilelang
import tilelang.language as T

BK, BN = 32, 64


def col_max_kernel(batch: int, d1: int, d2: int, target=None):
    if d1 % BK or d2 % BN:
        raise ValueError(f"col_max_kernel: ({d1}, {d2}) is not a multiple of ({BK}, {BN})")

    @T.prim_func
    def col_max(X: T.Tensor((batch, d1, d2), "float32"), Y: T.Tensor((batch, d2), "float32")):
        with T.Kernel(d2 // BN, batch, threads=256) as (bn, b):
            acc = T.alloc_fragment((BK, BN), "float32")
            out = T.alloc_fragment((BN,), "float32")
            T.fill(acc, -T.infinity("float32"))
            for k in T.serial(d1 // BK):
                for i, j in T.Parallel(BK, BN):
                    acc[i, j] = T.max(acc[i, j], X[b, k * BK + i, bn * BN + j])
            T.reduce_max(acc, out, dim=0)
            T.copy(out, Y[b, bn * BN])

    return tilelang.compile(col_max, out_idx=[1], target=target)


CHECK = [(col_max_kernel, {"batch": 32, "d1": 1024, "d2": 2048})]


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        if dim != 1:
            raise ValueError("this kernel reduces dim 1 of a 3-D tensor")
        self.dim = dim
        self._kernels = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        key = tuple(x.shape)
        if key not in self._kernels:
            self._kernels[key] = col_max_kernel(*key)
        return self._kernels[key](x.contiguous())

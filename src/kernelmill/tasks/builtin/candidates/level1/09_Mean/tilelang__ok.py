"""TileLang seed for level1/09_Mean: x.mean(dim=1) for x of shape (B, S, H).

PyTorch -> TileLang:
  reduce over the middle dim  -> a 2-D grid: (batch, BN-wide strip of H)
  the running sum             -> a (BK, BN) T.alloc_fragment, T.clear then += in a T.Parallel
                                 loop per (BK, BN) tile (coalesced along H)
  sum of the BK partials      -> T.reduce_sum(acc, out, dim=0)
  / S                         -> a multiply by the compile-time constant 1/S in a T.Parallel loop
"""
import torch
import torch.nn as nn
import tilelang
import tilelang.language as T

BK, BN = 32, 64


def col_mean_kernel(batch: int, s: int, h: int, target=None):
    if s % BK or h % BN:
        raise ValueError(f"col_mean_kernel: ({s}, {h}) is not a multiple of ({BK}, {BN})")

    @T.prim_func
    def col_mean(X: T.Tensor((batch, s, h), "float32"), Y: T.Tensor((batch, h), "float32")):
        with T.Kernel(h // BN, batch, threads=256) as (bn, b):
            acc = T.alloc_fragment((BK, BN), "float32")
            out = T.alloc_fragment((BN,), "float32")
            T.clear(acc)
            for k in T.serial(s // BK):
                for i, j in T.Parallel(BK, BN):
                    acc[i, j] += X[b, k * BK + i, bn * BN + j]
            T.reduce_sum(acc, out, dim=0)
            for j in T.Parallel(BN):
                Y[b, bn * BN + j] = out[j] * (1.0 / s)

    return tilelang.compile(col_mean, out_idx=[1], target=target)


CHECK = [(col_mean_kernel, {"batch": 64, "s": 1024, "h": 1024})]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._kernels = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        key = tuple(x.shape)
        if key not in self._kernels:
            self._kernels[key] = col_mean_kernel(*key)
        return self._kernels[key](x.contiguous())

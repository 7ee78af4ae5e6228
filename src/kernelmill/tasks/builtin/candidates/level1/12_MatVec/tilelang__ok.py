"""TileLang seed for level1/12_MatVec: A (M, K) @ v (K, 1), fp32.

PyTorch -> TileLang:
  one dot product per row of A  -> ROWS rows per T.Kernel block (256 threads); a (ROWS, BLK)
                                   T.alloc_fragment accumulates A[m, k] * v[k] over a T.serial
                                   loop of BLK-wide chunks (T.Parallel; adjacent threads read
                                   adjacent k: coalesced; v is re-read from L2 by every block)
  the dot product's sum         -> T.reduce_sum over dim 1
  (M, 1) result                 -> T.copy of the (ROWS,) sums into Y[m0:m0+ROWS, 0]
Memory bound (A is read once); fp32 throughout.
"""
import torch
import torch.nn as nn
import tilelang
import tilelang.language as T

ROWS, BLK = 4, 512


def matvec_kernel(M: int, K: int, target=None):
    if M % ROWS or K % BLK:
        raise ValueError(f"matvec_kernel: ({M}, {K}) is not a multiple of ({ROWS}, {BLK})")

    @T.prim_func
    def matvec(A: T.Tensor((M, K), "float32"), V: T.Tensor((K, 1), "float32"), Y: T.Tensor((M, 1), "float32")):
        with T.Kernel(M // ROWS, threads=256) as bm:
            acc = T.alloc_fragment((ROWS, BLK), "float32")
            total = T.alloc_fragment((ROWS,), "float32")
            T.clear(acc)
            for k in T.serial(K // BLK):
                for i, j in T.Parallel(ROWS, BLK):
                    acc[i, j] += A[bm * ROWS + i, k * BLK + j] * V[k * BLK + j, 0]
            T.reduce_sum(acc, total, dim=1)
            for i in T.Parallel(ROWS):
                Y[bm * ROWS + i, 0] = total[i]

    return tilelang.compile(matvec, out_idx=[2], target=target)


CHECK = [(matvec_kernel, {"M": 8192, "K": 16384})]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._kernels = {}

    def forward(self, A: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        key = tuple(A.shape)
        if key not in self._kernels:
            self._kernels[key] = matvec_kernel(*key)
        return self._kernels[key](A.contiguous(), v.contiguous())

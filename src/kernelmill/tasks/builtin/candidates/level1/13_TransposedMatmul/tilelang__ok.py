"""TileLang seed for level1/13_TransposedMatmul: C = A.T @ B with A of shape (K, M).

PyTorch -> TileLang:
  A.T (a view)        -> no transpose is made: A (K, M) is read K-major as it is stored,
                          its slices copied straight into the shared tile with T.copy
  the GEMM itself, exact fp32 -> TileLang's T.gemm on fp32 operands uses TF32 tensor cores
      (about 1e-3 relative error at K = 4096; the task's fp32 tolerance is 1e-4), so this is a
      register-tiled CUDA-core GEMM written with TileLang's tile primitives:
        a 128x128 output tile per T.Kernel block (256 threads, 8x8 outputs per thread)
        K walked in BK=16 slices by T.Pipelined (2 stages: loads of slice k+1 overlap the
          math of slice k; TileLang splits producer and consumer threads on Hopper)
        operand slices staged K-major in T.alloc_shared tiles
        T.alloc_local registers: 8 values of A and 8 of B per step, 64 accumulators,
          T.unroll'ed outer product
Computed in fp32 with fp32 accumulation, as the reference (the harness disables TF32).
"""
import torch
import torch.nn as nn
import tilelang
import tilelang.language as T

BM, BN, BK, TM, TN = 128, 128, 16, 8, 8
THREADS = (BM // TM) * (BN // TN)


def _check(name, **dims):
    for d, (v, tile) in dims.items():
        if v % tile:
            raise ValueError(f"{name}: {d} = {v} is not a multiple of {tile}")


def at_b_kernel(M: int, N: int, K: int, target=None):
    """"""
    _check("at_b_kernel", M=(M, BM), N=(N, BN), K=(K, BK))

    @T.prim_func
    def at_b_fp32(A: T.Tensor((K, M), "float32"), B: T.Tensor((K, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(N // BN, M // BM, threads=THREADS) as (bx, by):
            As = T.alloc_shared((BK, BM), "float32")
            Bs = T.alloc_shared((BK, BN), "float32")
            acc = T.alloc_local((TM, TN), "float32")
            a = T.alloc_local((TM,), "float32")
            b = T.alloc_local((TN,), "float32")
            tid = T.get_thread_binding()
            ty = tid // (BN // TN)
            tx = tid % (BN // TN)
            for i, j in T.grid(TM, TN):
                acc[i, j] = 0.0
            for ko in T.Pipelined(K // BK, num_stages=2):
                T.copy(A[ko * BK, by * BM], As)  # A is (K, M): the slice is already K-major
                T.copy(B[ko * BK, bx * BN], Bs)  # B (K, N) row-major: K-major already
                for kk in T.serial(BK):
                    for i in T.unroll(TM):
                        a[i] = As[kk, ty * TM + i]
                    for j in T.unroll(TN):
                        b[j] = Bs[kk, tx * TN + j]
                    for i, j in T.grid(TM, TN):
                        acc[i, j] += a[i] * b[j]
            for i, j in T.grid(TM, TN):
                m = by * BM + ty * TM + i
                n = bx * BN + tx * TN + j
                C[m, n] = acc[i, j]

    return tilelang.compile(at_b_fp32, out_idx=[2], target=target)


CHECK = [(at_b_kernel, {"M": 2048, "N": 2048, "K": 4096})]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._kernels = {}

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        key = (A.shape[1], B.shape[1], A.shape[0])
        if key not in self._kernels:
            self._kernels[key] = at_b_kernel(*key)
        return self._kernels[key](A.contiguous(), B.contiguous())

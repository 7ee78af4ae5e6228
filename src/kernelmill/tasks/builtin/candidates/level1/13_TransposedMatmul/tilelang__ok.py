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
  the order of the sum over K -> K summed as SLICES = 2 halves of 2048: each half in its own
      fp32 accumulator from zero (one FMA per step), the halves' sums added in order into a
      second set of 64 registers (`tot`), flushed by an `if` at the end of a half's last step.
      Why: fp32 sums of K = 4096 randn products carry ~5e-5 rms rounding error, so a kernel
      passes the 1e-4 tolerance on every output only if it sums in the reference's order.
      On the H100 (torch 2.11, CUDA 13.0) cuBLAS runs this shape as
      cutlass_80_simt_sgemm_128x256_8x4_nt_align1 after a memset: split-K in 2.
      benchmarks/diag/tilelang_13_order.py measured it (docs/results/issue15/h100_order13.log):
      against cuBLAS, 1 chain (this seed's first version) left 2,181 of 25,165,824 outputs
      outside the tolerance, 4 slices 1,992, 8 slices 2,853, 16 slices 2,901, a float64
      accumulator 2,469; 2 slices left none and matched cuBLAS bitwise on every output.
      Another GPU or cuBLAS version may pick another split; `slices` is a parameter.
Computed in fp32 with fp32 accumulation, as the reference (the harness disables TF32).
"""
import torch
import torch.nn as nn
import tilelang
import tilelang.language as T

BM, BN, BK, TM, TN = 128, 128, 16, 8, 8
SLICES = 2  # K is summed as this many slices (the docstring says why)
THREADS = (BM // TM) * (BN // TN)


def _check(name, **dims):
    for d, (v, tile) in dims.items():
        if v % tile:
            raise ValueError(f"{name}: {d} = {v} is not a multiple of {tile}")


def at_b_kernel(M: int, N: int, K: int, slices: int = SLICES, acc_dtype: str = "float32", target=None):
    """C = A.T @ B; K summed as `slices` equal slices, each in its own accumulator from zero,
    the slices' sums added in order (slices=1: one FMA chain over all of K). acc_dtype="float64"
    accumulates in double (the result then is the exact sum rounded once; slower)."""
    _check("at_b_kernel", M=(M, BM), N=(N, BN), K=(K, BK * slices))
    KS = K // slices

    @T.prim_func
    def at_b_fp32(A: T.Tensor((K, M), "float32"), B: T.Tensor((K, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(N // BN, M // BM, threads=THREADS) as (bx, by):
            As = T.alloc_shared((BK, BM), "float32")
            Bs = T.alloc_shared((BK, BN), "float32")
            acc = T.alloc_local((TM, TN), acc_dtype)  # this slice's partial sums
            tot = T.alloc_local((TM, TN), acc_dtype)  # the slices' sums, added in order
            a = T.alloc_local((TM,), acc_dtype)
            b = T.alloc_local((TN,), acc_dtype)
            tid = T.get_thread_binding()
            ty = tid // (BN // TN)
            tx = tid % (BN // TN)
            for i, j in T.grid(TM, TN):
                tot[i, j] = 0.0
                acc[i, j] = 0.0
            for ko in T.Pipelined(K // BK, num_stages=2):
                T.copy(A[ko * BK, by * BM], As)  # A is (K, M): the slice is already K-major
                T.copy(B[ko * BK, bx * BN], Bs)  # B (K, N) row-major: K-major already
                for kk in T.serial(BK):
                    for i in T.unroll(TM):
                        a[i] = T.Cast(acc_dtype, As[kk, ty * TM + i])
                    for j in T.unroll(TN):
                        b[j] = T.Cast(acc_dtype, Bs[kk, tx * TN + j])
                    for i, j in T.grid(TM, TN):
                        acc[i, j] += a[i] * b[j]  # one FMA: a single rounding per step
                if (ko + 1) % (KS // BK) == 0:  # a slice ends: add its sum, start the next from zero
                    for i, j in T.grid(TM, TN):
                        tot[i, j] = tot[i, j] + acc[i, j]
                        acc[i, j] = 0.0
            for i, j in T.grid(TM, TN):
                m = by * BM + ty * TM + i
                n = bx * BN + tx * TN + j
                C[m, n] = T.Cast("float32", tot[i, j])

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

"""TileLang seed for level2/09_SwiGLU: F.silu(x @ Wg^T) * (x @ Wu^T).

PyTorch -> TileLang:
  the two nn.Linear(bias=False) -> one kernel, two GEMMs sharing the staged x slice: two B tiles
                                   (gate and up weights, transposed while staging) and two sets of
                                   8x8 accumulators per thread
  F.silu(g) * u                 -> epilogue: g / (1 + T.exp(-g)) * u, one write; neither projection
                                   goes to memory
  the GEMM itself, exact fp32 -> TileLang's T.gemm on fp32 operands uses TF32 tensor cores
      (about 1e-3 relative error at K = 4096; the task's fp32 tolerance is 1e-4), so this is a
      register-tiled CUDA-core GEMM written with TileLang's tile primitives:
        a 128x128 output tile per T.Kernel block (256 threads, 8x8 outputs per thread)
        K walked in BK=16 slices by T.Pipelined (2 stages: loads of slice k+1 overlap the
          math of slice k; TileLang splits producer and consumer threads on Hopper)
        operand slices staged K-major in T.alloc_shared tiles (x and both weights transposed on the way in)
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


def swiglu_kernel(M: int, N: int, K: int, target=None):
    """silu(x Wg^T) * (x Wu^T) for fp32 x (M, K) and weights (N, K)."""
    _check("swiglu_kernel", M=(M, BM), N=(N, BN), K=(K, BK))

    @T.prim_func
    def swiglu_fp32(A: T.Tensor((M, K), "float32"), Wg: T.Tensor((N, K), "float32"), Wu: T.Tensor((N, K), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(N // BN, M // BM, threads=THREADS) as (bx, by):
            As = T.alloc_shared((BK, BM), "float32")
            Gs = T.alloc_shared((BK, BN), "float32")
            Us = T.alloc_shared((BK, BN), "float32")
            bu = T.alloc_local((TN,), "float32")
            accg = T.alloc_local((TM, TN), "float32")
            accu = T.alloc_local((TM, TN), "float32")
            for i, j in T.grid(TM, TN):
                accg[i, j] = 0.0
                accu[i, j] = 0.0
            a = T.alloc_local((TM,), "float32")
            b = T.alloc_local((TN,), "float32")
            tid = T.get_thread_binding()
            ty = tid // (BN // TN)
            tx = tid % (BN // TN)
            for ko in T.Pipelined(K // BK, num_stages=2):
                for k, i in T.Parallel(BK, BM):
                    As[k, i] = A[by * BM + i, ko * BK + k]
                for k, j in T.Parallel(BK, BN):  # both weights (N, K): x @ W^T
                    Gs[k, j] = Wg[bx * BN + j, ko * BK + k]
                    Us[k, j] = Wu[bx * BN + j, ko * BK + k]
                for kk in T.serial(BK):
                    for i in T.unroll(TM):
                        a[i] = As[kk, ty * TM + i]
                    for j in T.unroll(TN):
                        b[j] = Gs[kk, tx * TN + j]
                        bu[j] = Us[kk, tx * TN + j]
                    for i, j in T.grid(TM, TN):
                        accg[i, j] += a[i] * b[j]
                        accu[i, j] += a[i] * bu[j]
            for i, j in T.grid(TM, TN):
                g = accg[i, j]
                C[by * BM + ty * TM + i, bx * BN + tx * TN + j] = g / (1.0 + T.exp(-g)) * accu[i, j]

    return tilelang.compile(swiglu_fp32, out_idx=[3], target=target)


CHECK = [(swiglu_kernel, {"M": 1024, "N": 5632, "K": 2048})]


class ModelNew(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.gate = nn.Linear(dim, hidden, bias=False)  # as the reference, same order
        self.up = nn.Linear(dim, hidden, bias=False)
        self._kernels = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        key = (x.shape[0], self.gate.out_features, self.gate.in_features)
        if key not in self._kernels:
            self._kernels[key] = swiglu_kernel(*key)
        return self._kernels[key](x.contiguous(), self.gate.weight.detach(), self.up.weight.detach())

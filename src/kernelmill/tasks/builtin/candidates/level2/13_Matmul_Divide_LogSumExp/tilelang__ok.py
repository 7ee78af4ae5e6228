"""TileLang seed for level2/13_Matmul_Divide_LogSumExp: torch.logsumexp(x @ W^T / temperature, dim=1).

PyTorch -> TileLang:
  nn.Linear(bias=False)      -> the GEMM below (W transposed while staging)
  / temperature              -> a multiply by 1/temperature in the epilogue
  logsumexp over dim 1       -> each thread reduces its 8 columns per row to (max, sum exp(v - max));
                                row_finish_kernel merges a row's partials: T.reduce_max of the
                                maxima, then sum_j s_j exp(m_j - max) by T.reduce_sum, max + log(sum)
  the (M, N) logits          -> never written to memory
  the GEMM itself, exact fp32 -> TileLang's T.gemm on fp32 operands uses TF32 tensor cores
      (about 1e-3 relative error at K = 4096; the task's fp32 tolerance is 1e-4), so this is a
      register-tiled CUDA-core GEMM written with TileLang's tile primitives:
        a 128x128 output tile per T.Kernel block (256 threads, 8x8 outputs per thread)
        K walked in BK=16 slices by T.Pipelined (2 stages: loads of slice k+1 overlap the
          math of slice k; TileLang splits producer and consumer threads on Hopper)
        operand slices staged K-major in T.alloc_shared tiles (A and W transposed on the way in)
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


def proj_lse_partials_kernel(M: int, N: int, K: int, inv_t: float, target=None):
    """Per row, N / TN partial (max, sum of exp) pairs of x W^T / t."""
    _check("proj_lse_partials_kernel", M=(M, BM), N=(N, BN), K=(K, BK))

    @T.prim_func
    def proj_lse_partials(A: T.Tensor((M, K), "float32"), W: T.Tensor((N, K), "float32"), PM: T.Tensor((M, N // TN), "float32"), PS: T.Tensor((M, N // TN), "float32")):
        with T.Kernel(N // BN, M // BM, threads=THREADS) as (bx, by):
            As = T.alloc_shared((BK, BM), "float32")
            Bs = T.alloc_shared((BK, BN), "float32")
            acc = T.alloc_local((TM, TN), "float32")
            for i, j in T.grid(TM, TN):
                acc[i, j] = 0.0
            a = T.alloc_local((TM,), "float32")
            b = T.alloc_local((TN,), "float32")
            tid = T.get_thread_binding()
            ty = tid // (BN // TN)
            tx = tid % (BN // TN)
            for ko in T.Pipelined(K // BK, num_stages=2):
                for k, i in T.Parallel(BK, BM):
                    As[k, i] = A[by * BM + i, ko * BK + k]
                for k, j in T.Parallel(BK, BN):  # nn.Linear weight (N, K): x @ W^T
                    Bs[k, j] = W[bx * BN + j, ko * BK + k]
                for kk in T.serial(BK):
                    for i in T.unroll(TM):
                        a[i] = As[kk, ty * TM + i]
                    for j in T.unroll(TN):
                        b[j] = Bs[kk, tx * TN + j]
                    for i, j in T.grid(TM, TN):
                        acc[i, j] += a[i] * b[j]
            mx = T.alloc_local((TM,), "float32")
            sm = T.alloc_local((TM,), "float32")
            for i in T.serial(TM):
                mx[i] = -T.infinity("float32")
                sm[i] = 0.0
            for i, j in T.grid(TM, TN):
                mx[i] = T.max(mx[i], acc[i, j] * inv_t)
            for i, j in T.grid(TM, TN):
                sm[i] += T.exp(acc[i, j] * inv_t - mx[i])
            for i in T.serial(TM):
                PM[by * BM + ty * TM + i, bx * (BN // TN) + tx] = mx[i]
                PS[by * BM + ty * TM + i, bx * (BN // TN) + tx] = sm[i]

    return tilelang.compile(proj_lse_partials, out_idx=[2, 3], target=target)


def row_finish_kernel(M: int, G: int, target=None):
    """Combines the G partials of each row (one block of 256 threads per row, G a multiple of 256)."""
    _check("row_finish_kernel", G=(G, 256))

    @T.prim_func
    def row_finish(PM: T.Tensor((M, G), "float32"), PS: T.Tensor((M, G), "float32"), Y: T.Tensor((M,), "float32")):
        with T.Kernel(M, threads=256) as r:
            m = T.alloc_fragment((1, G), "float32")
            s = T.alloc_fragment((1, G), "float32")
            gm = T.alloc_fragment((1,), "float32")
            gs = T.alloc_fragment((1,), "float32")
            T.copy(PM[r, 0], m)
            T.reduce_max(m, gm, dim=1)
            for i, j in T.Parallel(1, G):
                s[i, j] = PS[r, j] * T.exp(m[i, j] - gm[i])
            T.reduce_sum(s, gs, dim=1)
            Y[r] = gm[0] + T.log(gs[0])

    return tilelang.compile(row_finish, out_idx=[2], target=target)


CHECK = [(proj_lse_partials_kernel, {"M": 2048, "N": 4096, "K": 4096, "inv_t": 1.0 / 0.7}),
         (row_finish_kernel, {"M": 2048, "G": 512})]


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int, temperature: float):
        super().__init__()
        self.proj = nn.Linear(in_features, out_features, bias=False)  # as the reference
        self.temperature = float(temperature)
        self._kernels = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        M, N, K = x.shape[0], self.proj.out_features, self.proj.in_features
        if (M, N, K) not in self._kernels:
            self._kernels[(M, N, K)] = (proj_lse_partials_kernel(M, N, K, 1.0 / self.temperature),
                                        row_finish_kernel(M, N // TN))
        partials, finish = self._kernels[(M, N, K)]
        pm, ps = partials(x.contiguous(), self.proj.weight.detach())
        return finish(pm, ps)

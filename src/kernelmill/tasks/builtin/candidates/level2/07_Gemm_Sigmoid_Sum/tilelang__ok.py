"""TileLang seed for level2/07_Gemm_Sigmoid_Sum: sigmoid(x @ W^T + b).sum(dim=1, keepdim=True).

PyTorch -> TileLang:
  nn.Linear                  -> the GEMM below (W transposed while staging)
  + bias, torch.sigmoid      -> epilogue on each thread's 8x8 accumulators
  .sum(dim=1, keepdim=True)  -> each thread sums its 8 columns per row into one partial
                                (N / 8 partials per row, no atomics); row_finish_kernel adds a
                                row's partials with a (1, 256) fragment and T.reduce_sum
  the (M, N) activation      -> never written to memory
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


def linear_sigmoid_partials_kernel(M: int, N: int, K: int, target=None):
    """Per row of x, N / TN partial sums of sigmoid(x W^T + b)."""
    _check("linear_sigmoid_partials_kernel", M=(M, BM), N=(N, BN), K=(K, BK))

    @T.prim_func
    def linear_sigmoid_partials(A: T.Tensor((M, K), "float32"), W: T.Tensor((N, K), "float32"), Bias: T.Tensor((N,), "float32"), P: T.Tensor((M, N // TN), "float32")):
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
            rs = T.alloc_local((TM,), "float32")
            for i in T.serial(TM):
                rs[i] = 0.0
            for i, j in T.grid(TM, TN):
                rs[i] += 1.0 / (1.0 + T.exp(-(acc[i, j] + Bias[bx * BN + tx * TN + j])))
            for i in T.serial(TM):
                P[by * BM + ty * TM + i, bx * (BN // TN) + tx] = rs[i]

    return tilelang.compile(linear_sigmoid_partials, out_idx=[3], target=target)


def row_finish_kernel(M: int, G: int, target=None):
    """Combines the G partials of each row (one block of 256 threads per row, G a multiple of 256)."""
    _check("row_finish_kernel", G=(G, 256))

    @T.prim_func
    def row_finish(P: T.Tensor((M, G), "float32"), Y: T.Tensor((M, 1), "float32")):
        with T.Kernel(M, threads=256) as r:
            acc = T.alloc_fragment((1, 256), "float32")
            total = T.alloc_fragment((1,), "float32")
            T.clear(acc)
            for k in T.serial(G // 256):
                for i, j in T.Parallel(1, 256):
                    acc[i, j] += P[r, k * 256 + j]
            T.reduce_sum(acc, total, dim=1)
            Y[r, 0] = total[0]

    return tilelang.compile(row_finish, out_idx=[1], target=target)


CHECK = [(linear_sigmoid_partials_kernel, {"M": 1024, "N": 2048, "K": 4096}), (row_finish_kernel, {"M": 1024, "G": 256})]


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)  # as the reference
        self._kernels = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        M, N, K = x.shape[0], self.gemm.out_features, self.gemm.in_features
        if (M, N, K) not in self._kernels:
            self._kernels[(M, N, K)] = (linear_sigmoid_partials_kernel(M, N, K), row_finish_kernel(M, N // TN))
        partials, finish = self._kernels[(M, N, K)]
        return finish(partials(x.contiguous(), self.gemm.weight.detach(), self.gemm.bias.detach()))

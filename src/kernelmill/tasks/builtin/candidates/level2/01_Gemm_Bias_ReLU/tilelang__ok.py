"""TileLang seed for level2/01_Gemm_Bias_ReLU: relu(x @ W^T + b) (nn.Linear, then ReLU).

PyTorch -> TileLang:
  nn.Linear weight (out, in) -> read as the GEMM's B operand transposed while staging (x @ W^T)
  + bias, torch.relu         -> fused epilogue on the accumulators: T.max(acc + Bias[n], 0),
                                one write of C, no intermediate tensor
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


def linear_relu_kernel(M: int, N: int, K: int, target=None):
    """"""
    _check("linear_relu_kernel", M=(M, BM), N=(N, BN), K=(K, BK))

    @T.prim_func
    def linear_bias_relu(A: T.Tensor((M, K), "float32"), W: T.Tensor((N, K), "float32"), Bias: T.Tensor((N,), "float32"), C: T.Tensor((M, N), "float32")):
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
                for k, i in T.Parallel(BK, BM):  # A[m, k] row-major -> K-major tile
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
            for i, j in T.grid(TM, TN):
                m = by * BM + ty * TM + i
                n = bx * BN + tx * TN + j
                C[m, n] = T.max(acc[i, j] + Bias[n], T.float32(0))

    return tilelang.compile(linear_bias_relu, out_idx=[3], target=target)


CHECK = [(linear_relu_kernel, {"M": 512, "N": 4096, "K": 4096})]


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)  # as the reference: same init under the seed
        self._kernels = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        key = (x.shape[0], self.gemm.out_features, self.gemm.in_features)
        if key not in self._kernels:
            self._kernels[key] = linear_relu_kernel(*key)
        return self._kernels[key](x.contiguous(), self.gemm.weight.detach(), self.gemm.bias.detach())

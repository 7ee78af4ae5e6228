"""TileLang seed for level3/01_MLP: Linear+ReLU, Linear+ReLU, Linear (4096 -> 4096 -> 4096 -> 1024).

PyTorch -> TileLang:
  each nn.Linear (+ nn.ReLU)  -> one launch of the GEMM below with the bias (and the ReLU,
                                 a compile-time switch) fused into the epilogue; the weights are
                                 the module's own nn.Sequential, built as the reference builds it
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


def linear_kernel(M: int, N: int, K: int, relu: bool, target=None):
    """"""
    _check("linear_kernel", M=(M, BM), N=(N, BN), K=(K, BK))

    @T.prim_func
    def linear_bias_act(A: T.Tensor((M, K), "float32"), W: T.Tensor((N, K), "float32"), Bias: T.Tensor((N,), "float32"), C: T.Tensor((M, N), "float32")):
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
                C[m, n] = T.max(acc[i, j] + Bias[n], T.float32(0)) if relu else acc[i, j] + Bias[n]

    return tilelang.compile(linear_bias_act, out_idx=[3], target=target)


CHECK = [(linear_kernel, {"M": 256, "N": 4096, "K": 4096, "relu": True}),
         (linear_kernel, {"M": 256, "N": 1024, "K": 4096, "relu": False})]


class ModelNew(nn.Module):
    def __init__(self, input_size: int, hidden_sizes: list, output_size: int):
        super().__init__()
        layers = []  # the reference's modules in the reference's order: same parameters under the seed
        width = input_size
        for h in hidden_sizes:
            layers += [nn.Linear(width, h), nn.ReLU()]
            width = h
        layers.append(nn.Linear(width, output_size))
        self.net = nn.Sequential(*layers)
        self._kernels = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        linears = [m for m in self.net if isinstance(m, nn.Linear)]
        h = x.contiguous()
        for idx, lin in enumerate(linears):
            relu = idx < len(linears) - 1
            key = (h.shape[0], lin.out_features, lin.in_features, relu)
            if key not in self._kernels:
                self._kernels[key] = linear_kernel(*key)
            h = self._kernels[key](h, lin.weight.detach(), lin.bias.detach())
        return h

"""TileLang seed for level2/14_Gemm_GELU_bf16: F.gelu(x @ W^T + b, approximate="tanh") in bfloat16.

PyTorch -> TileLang:
  nn.Linear (bf16)           -> T.gemm on bf16 T.alloc_shared tiles into a float32 fragment,
                                K walked by T.Pipelined (3 stages); the weight (out, in) is staged
                                as it is stored and multiplied with transpose_B=True (x @ W^T)
  + bias                     -> epilogue on the fp32 fragment (T.Parallel over the tile)
  F.gelu(approximate="tanh") -> same epilogue loop: 0.5 y (1 + tanh(sqrt(2/pi) (y + 0.044715 y^3)))
                                with T.tanh, then T.copy rounds to bf16 once
The reference rounds the linear's output to bf16 before the GELU; the fused epilogue keeps
it in fp32 (closer to exact); the bf16 tolerance covers the difference.
"""
import torch
import torch.nn as nn
import tilelang
import tilelang.language as T

BM, BN, BK = 128, 128, 64


def linear_gelu_kernel(M: int, N: int, K: int, target=None):
    if M % BM or N % BN or K % BK:
        raise ValueError(f"linear_gelu_kernel: ({M}, {N}, {K}) is not a multiple of ({BM}, {BN}, {BK})")

    @T.prim_func
    def linear_gelu_bf16(X: T.Tensor((M, K), "bfloat16"), W: T.Tensor((N, K), "bfloat16"),
                         Bias: T.Tensor((N,), "bfloat16"), Y: T.Tensor((M, N), "bfloat16")):
        with T.Kernel(N // BN, M // BM, threads=256) as (bx, by):
            X_s = T.alloc_shared((BM, BK), "bfloat16")
            W_s = T.alloc_shared((BN, BK), "bfloat16")
            C_f = T.alloc_fragment((BM, BN), "float32")
            T.clear(C_f)
            for ko in T.Pipelined(K // BK, num_stages=3):
                T.copy(X[by * BM, ko * BK], X_s)
                T.copy(W[bx * BN, ko * BK], W_s)
                T.gemm(X_s, W_s, C_f, transpose_B=True)
            for i, j in T.Parallel(BM, BN):
                y = C_f[i, j] + T.Cast("float32", Bias[bx * BN + j])
                C_f[i, j] = 0.5 * y * (1.0 + T.tanh(0.7978845608028654 * (y + 0.044715 * y * y * y)))
            T.copy(C_f, Y[by * BM, bx * BN])

    return tilelang.compile(linear_gelu_bf16, out_idx=[3], target=target)


CHECK = [(linear_gelu_kernel, {"M": 2048, "N": 4096, "K": 4096})]


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features, dtype=torch.bfloat16)  # as the reference
        self._kernels = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        key = (x.shape[0], self.gemm.out_features, self.gemm.in_features)
        if key not in self._kernels:
            self._kernels[key] = linear_gelu_kernel(*key)
        return self._kernels[key](x.contiguous(), self.gemm.weight.detach(), self.gemm.bias.detach())

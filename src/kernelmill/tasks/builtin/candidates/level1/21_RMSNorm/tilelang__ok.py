"""TileLang seed for level1/21_RMSNorm: x * rsqrt(mean(x^2) + eps) * weight over rows of 4096.

PyTorch -> TileLang:
  one row per block            -> T.Kernel(rows, threads=256)
  x.pow(2).mean(-1)            -> x in a (1, hidden) T.alloc_fragment (T.copy), squares in a
                                  second fragment, T.reduce_sum, times 1/hidden
  torch.rsqrt(... + eps)       -> T.rsqrt
  x * rms * self.weight        -> one T.Parallel loop reading the (hidden,) weight, T.copy out
"""
import torch
import torch.nn as nn
import tilelang
import tilelang.language as T


def rms_norm_kernel(rows: int, hidden: int, eps: float, target=None):
    @T.prim_func
    def rms_norm(X: T.Tensor((rows, hidden), "float32"), W: T.Tensor((hidden,), "float32"),
                 Y: T.Tensor((rows, hidden), "float32")):
        with T.Kernel(rows, threads=256) as r:
            x = T.alloc_fragment((1, hidden), "float32")
            sq = T.alloc_fragment((1, hidden), "float32")
            ss = T.alloc_fragment((1,), "float32")
            T.copy(X[r, 0], x)
            for i, j in T.Parallel(1, hidden):
                sq[i, j] = x[i, j] * x[i, j]
            T.reduce_sum(sq, ss, dim=1)
            for i, j in T.Parallel(1, hidden):
                x[i, j] = x[i, j] * T.rsqrt(ss[i] * (1.0 / hidden) + eps) * W[j]
            T.copy(x, Y[r, 0])

    return tilelang.compile(rms_norm, out_idx=[2], target=target)


CHECK = [(rms_norm_kernel, {"rows": 16 * 1024, "hidden": 4096, "eps": 1e-6})]


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(hidden))  # as the reference
        self._kernels = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = x.shape[-1]
        key = (x.numel() // hidden, hidden)
        if key not in self._kernels:
            self._kernels[key] = rms_norm_kernel(*key, self.eps)
        return self._kernels[key](x.contiguous().view(key), self.weight.detach()).view(x.shape)

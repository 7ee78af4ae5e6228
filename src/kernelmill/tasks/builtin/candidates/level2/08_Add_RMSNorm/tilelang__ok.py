"""TileLang seed for level2/08_Add_RMSNorm: h = x + residual; h * rsqrt(mean(h^2) + eps) * weight.

PyTorch -> TileLang:
  x + residual             -> one T.Kernel block per row; the sum is formed while filling the
                              (1, hidden) T.alloc_fragment (each input read once, h never stored)
  h.pow(2).mean(-1)        -> squares in a second fragment, T.reduce_sum, * 1/hidden
  rsqrt(. + eps) * weight  -> T.rsqrt and the (hidden,) weight in one T.Parallel loop, T.copy out
"""
import torch
import torch.nn as nn
import tilelang
import tilelang.language as T


def add_rms_norm_kernel(rows: int, hidden: int, eps: float, target=None):
    @T.prim_func
    def add_rms_norm(X: T.Tensor((rows, hidden), "float32"), R: T.Tensor((rows, hidden), "float32"),
                     W: T.Tensor((hidden,), "float32"), Y: T.Tensor((rows, hidden), "float32")):
        with T.Kernel(rows, threads=256) as r:
            h = T.alloc_fragment((1, hidden), "float32")
            sq = T.alloc_fragment((1, hidden), "float32")
            ss = T.alloc_fragment((1,), "float32")
            for i, j in T.Parallel(1, hidden):
                h[i, j] = X[r, j] + R[r, j]
            for i, j in T.Parallel(1, hidden):
                sq[i, j] = h[i, j] * h[i, j]
            T.reduce_sum(sq, ss, dim=1)
            for i, j in T.Parallel(1, hidden):
                h[i, j] = h[i, j] * T.rsqrt(ss[i] * (1.0 / hidden) + eps) * W[j]
            T.copy(h, Y[r, 0])

    return tilelang.compile(add_rms_norm, out_idx=[3], target=target)


CHECK = [(add_rms_norm_kernel, {"rows": 8 * 2048, "hidden": 4096, "eps": 1e-6})]


class ModelNew(nn.Module):
    def __init__(self, hidden: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(hidden))  # as the reference
        self._kernels = {}

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        hidden = x.shape[-1]
        key = (x.numel() // hidden, hidden)
        if key not in self._kernels:
            self._kernels[key] = add_rms_norm_kernel(*key, self.eps)
        y = self._kernels[key](x.contiguous().view(key), residual.contiguous().view(key), self.weight.detach())
        return y.view(x.shape)

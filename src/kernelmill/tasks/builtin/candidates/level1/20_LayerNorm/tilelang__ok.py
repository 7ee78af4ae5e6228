"""TileLang seed for level1/20_LayerNorm: nn.LayerNorm(hidden, eps=1e-5) over rows of 4096.

PyTorch -> TileLang:
  one normalised row per block      -> T.Kernel(rows, threads=256)
  the row in registers              -> T.copy into a (1, hidden) T.alloc_fragment (x read once)
  mean                              -> T.reduce_sum, times 1/hidden
  biased variance, two-pass         -> (x - mean)^2 into a second fragment, T.reduce_sum
  (x - mean) * rsqrt(var + eps)     -> T.rsqrt in a T.Parallel loop
  * weight + bias (the affine)      -> the module's own nn.LayerNorm parameters, passed as
                                       (hidden,) tensors and read in the same T.Parallel loop
Parameters: `self.norm` is created and initialised exactly as the reference's, so both
are the same under the harness's seed.
"""
import torch
import torch.nn as nn
import tilelang
import tilelang.language as T


def layer_norm_kernel(rows: int, hidden: int, eps: float, target=None):
    @T.prim_func
    def layer_norm(X: T.Tensor((rows, hidden), "float32"), W: T.Tensor((hidden,), "float32"),
                   B: T.Tensor((hidden,), "float32"), Y: T.Tensor((rows, hidden), "float32")):
        with T.Kernel(rows, threads=256) as r:
            x = T.alloc_fragment((1, hidden), "float32")
            d = T.alloc_fragment((1, hidden), "float32")
            mean = T.alloc_fragment((1,), "float32")
            var = T.alloc_fragment((1,), "float32")
            T.copy(X[r, 0], x)
            T.reduce_sum(x, mean, dim=1)
            for i in T.Parallel(1):
                mean[i] = mean[i] * (1.0 / hidden)
            for i, j in T.Parallel(1, hidden):
                d[i, j] = (x[i, j] - mean[i]) * (x[i, j] - mean[i])
            T.reduce_sum(d, var, dim=1)
            for i, j in T.Parallel(1, hidden):
                x[i, j] = (x[i, j] - mean[i]) * T.rsqrt(var[i] * (1.0 / hidden) + eps) * W[j] + B[j]
            T.copy(x, Y[r, 0])

    return tilelang.compile(layer_norm, out_idx=[3], target=target)


CHECK = [(layer_norm_kernel, {"rows": 32 * 256, "hidden": 4096, "eps": 1e-5})]


class ModelNew(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.norm = nn.LayerNorm(hidden, eps=1e-5)
        with torch.no_grad():  # as the reference initialises it
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)
        self._kernels = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = x.shape[-1]
        key = (x.numel() // hidden, hidden)
        if key not in self._kernels:
            self._kernels[key] = layer_norm_kernel(*key, self.norm.eps)
        y = self._kernels[key](x.contiguous().view(key), self.norm.weight.detach(), self.norm.bias.detach())
        return y.view(x.shape)

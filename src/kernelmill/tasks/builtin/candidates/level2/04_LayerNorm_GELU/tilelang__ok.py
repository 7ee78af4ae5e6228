"""TileLang seed for level2/04_LayerNorm_GELU: F.gelu(LayerNorm(x)) over rows of 4096.

PyTorch -> TileLang:
  nn.LayerNorm (mean, biased var)  -> one T.Kernel block per row; the row in a (1, hidden)
                                      T.alloc_fragment (T.copy, x read once); T.reduce_sum for the
                                      mean, then for the squared deviations (two-pass variance)
  normalise * weight + bias        -> T.rsqrt in a T.Parallel loop with the (hidden,) affine
  F.gelu (exact, erf)              -> fused into the same loop: 0.5 * y * (1 + T.erf(y / sqrt 2)),
                                      so the normalised tensor never goes to memory
"""
import torch
import torch.nn as nn
import tilelang
import tilelang.language as T


def layer_norm_gelu_kernel(rows: int, hidden: int, eps: float, target=None):
    @T.prim_func
    def layer_norm_gelu(X: T.Tensor((rows, hidden), "float32"), W: T.Tensor((hidden,), "float32"),
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
                y = (x[i, j] - mean[i]) * T.rsqrt(var[i] * (1.0 / hidden) + eps) * W[j] + B[j]
                x[i, j] = 0.5 * y * (1.0 + T.erf(y * 0.7071067811865476))
            T.copy(x, Y[r, 0])

    return tilelang.compile(layer_norm_gelu, out_idx=[3], target=target)


CHECK = [(layer_norm_gelu_kernel, {"rows": 8192, "hidden": 4096, "eps": 1e-5})]


class ModelNew(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)
        with torch.no_grad():  # as the reference
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)
        self._kernels = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = x.shape[-1]
        key = (x.numel() // hidden, hidden)
        if key not in self._kernels:
            self._kernels[key] = layer_norm_gelu_kernel(*key, self.norm.eps)
        y = self._kernels[key](x.contiguous().view(key), self.norm.weight.detach(), self.norm.bias.detach())
        return y.view(x.shape)

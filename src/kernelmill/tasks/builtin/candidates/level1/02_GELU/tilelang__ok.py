"""TileLang seed for level1/02_GELU: exact GELU, y = x * Phi(x).

PyTorch -> TileLang:
  F.gelu(x) (erf form) -> 0.5 * x * (1 + T.erf(x / sqrt(2))) on each element
  the flat index space (torch's elementwise TensorIterator) -> a 1-D grid of T.Kernel
  blocks, each block a T.Parallel loop over BLOCK elements (TileLang spreads it over the
  256 threads and vectorises the contiguous accesses).
Computed in fp32, as the reference does.
"""
import torch
import torch.nn as nn
import tilelang
import tilelang.language as T

BLOCK = 2048  # elements per block: 256 threads x 8


def gelu_kernel(n: int, target=None):
    """The kernel for a flat fp32 tensor of `n` elements (n a multiple of BLOCK)."""
    if n % BLOCK:
        raise ValueError(f"gelu_kernel: {n} elements is not a multiple of {BLOCK}")

    @T.prim_func
    def gelu_fwd(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32")):
        with T.Kernel(n // BLOCK, threads=256) as bx:
            for i in T.Parallel(BLOCK):
                x = X[bx * BLOCK + i]
                Y[bx * BLOCK + i] = 0.5 * x * (1.0 + T.erf(x * 0.7071067811865476))

    return tilelang.compile(gelu_fwd, out_idx=[1], target=target)


# the kernels this file builds for the task's full-size input (benchmarks/tilelang_seeds_check.py)
CHECK = [(gelu_kernel, {"n": 67108864})]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._kernels = {}  # one compiled kernel per element count

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.numel()
        if n not in self._kernels:
            self._kernels[n] = gelu_kernel(n)
        return self._kernels[n](x.contiguous().view(-1)).view(x.shape)

"""TileLang seed for level1/01_ReLU: ReLU, y = max(x, 0).

PyTorch -> TileLang:
  torch.relu(x) -> T.max(x, 0) on each element
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


def relu_kernel(n: int, target=None):
    """The kernel for a flat fp32 tensor of `n` elements (n a multiple of BLOCK)."""
    if n % BLOCK:
        raise ValueError(f"relu_kernel: {n} elements is not a multiple of {BLOCK}")

    @T.prim_func
    def relu_fwd(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32")):
        with T.Kernel(n // BLOCK, threads=256) as bx:
            for i in T.Parallel(BLOCK):
                x = X[bx * BLOCK + i]
                Y[bx * BLOCK + i] = T.max(x, T.float32(0))

    return tilelang.compile(relu_fwd, out_idx=[1], target=target)


# the kernels this file builds for the task's full-size input (benchmarks/tilelang_seeds_check.py)
CHECK = [(relu_kernel, {"n": 67108864})]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._kernels = {}  # one compiled kernel per element count

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.numel()
        if n not in self._kernels:
            self._kernels[n] = relu_kernel(n)
        return self._kernels[n](x.contiguous().view(-1)).view(x.shape)

"""TileLang seed for level1/05_LeakyReLU: LeakyReLU with the slope from get_init_inputs.

PyTorch -> TileLang:
  F.leaky_relu(x, s) -> T.if_then_else(x > 0, x, x * s); the slope is a compile-time constant of the kernel
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


def leaky_relu_kernel(n: int, slope: float, target=None):
    """The kernel for a flat fp32 tensor of `n` elements (n a multiple of BLOCK)."""
    if n % BLOCK:
        raise ValueError(f"leaky_relu_kernel: {n} elements is not a multiple of {BLOCK}")

    @T.prim_func
    def leaky_relu_fwd(X: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32")):
        with T.Kernel(n // BLOCK, threads=256) as bx:
            for i in T.Parallel(BLOCK):
                x = X[bx * BLOCK + i]
                Y[bx * BLOCK + i] = T.if_then_else(x > 0, x, x * slope)

    return tilelang.compile(leaky_relu_fwd, out_idx=[1], target=target)


# the kernels this file builds for the task's full-size input (benchmarks/tilelang_seeds_check.py)
CHECK = [(leaky_relu_kernel, {"n": 67108864, "slope": 0.05})]


class ModelNew(nn.Module):
    def __init__(self, negative_slope: float):
        super().__init__()
        self.negative_slope = float(negative_slope)
        self._kernels = {}  # one compiled kernel per element count

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.numel()
        if n not in self._kernels:
            self._kernels[n] = leaky_relu_kernel(n, self.negative_slope)
        return self._kernels[n](x.contiguous().view(-1)).view(x.shape)

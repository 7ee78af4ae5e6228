import torch
import torch.nn as nn
import tilelang
import tilelang.language as T


def build_add(n: int, threads: int = 256, dtype: str = "float32"):
    # one thread block covers `threads` elements; T.Parallel maps them to threads
    @T.prim_func
    def add(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype), C: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, threads), threads=threads) as bx:
            for i in T.Parallel(threads):
                idx = bx * threads + i
                if idx < n:
                    C[idx] = A[idx] + B[idx]

    # out_idx=-1: the compiled kernel allocates and returns C
    return tilelang.compile(add, out_idx=-1)


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self._kernels = {}

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        n = a.numel()
        if n not in self._kernels:
            self._kernels[n] = build_add(n)
        return self._kernels[n](a.contiguous().view(-1), b.contiguous().view(-1)).view_as(a)

"""TileLang on a machine without a GPU: a kernel lowers and compiles to CUDA
source when the target names an architecture (TileLang 0.1.15 takes the
target as a dict; it defaults to sm_50 without a GPU). Running it needs a GPU."""

from __future__ import annotations

import pytest
from optional_modules import import_or_skip

tilelang = import_or_skip("tilelang", reason="tilelang cannot be imported (pip install 'kernelmill[tilelang]')")


def test_elementwise_kernel_compiles_to_cuda_source_without_a_gpu():
    import tilelang.language as T

    n, threads = 1000, 128

    @T.prim_func
    def fma(A: T.Tensor((n,), "float16"), B: T.Tensor((n,), "float16"), C: T.Tensor((n,), "float16")):
        with T.Kernel(T.ceildiv(n, threads), threads=threads) as bx:
            for i in T.Parallel(threads):
                idx = bx * threads + i
                if idx < n:
                    C[idx] = A[idx] * B[idx] + A[idx]

    kernel = tilelang.compile(fma, out_idx=-1, target={"kind": "cuda", "arch": "sm_90"})
    src = kernel.get_kernel_source()
    assert '__global__ void __launch_bounds__(128, 1) fma_kernel(' in src
    assert "half_t* __restrict__ C" in src and "blockIdx.x" in src and "threadIdx.x" in src
    assert "(((int)blockIdx.x) * 128) + ((int)threadIdx.x)" in src

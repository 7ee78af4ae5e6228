"""A KernelBench-style task and two CuTe DSL candidates for it (issue 41): a correct
elementwise add and one whose index skips the last element of every row."""

import textwrap

TASK = textwrap.dedent('''
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def forward(self, a, b):
            return a + b

    def get_inputs():
        return [torch.randn(256, 384), torch.randn(256, 384)]

    def get_init_inputs():
        return []
''')

_CANDIDATE = textwrap.dedent('''
    import torch
    import torch.nn as nn
    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack

    THREADS = 256

    @cute.kernel
    def add_rows_kernel(gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor):
        tidx, _, _ = cute.arch.thread_idx()
        bidx, _, _ = cute.arch.block_idx()
        m, n = gA.shape
        flat = bidx * THREADS + tidx
        row = flat // n
        col = flat % n
        if flat < m * n:
            if col < n - SKIP:
                gC[row, col] = gA[row, col] + gB[row, col]

    @cute.jit
    def add_rows(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor):
        m, n = mA.shape
        add_rows_kernel(mA, mB, mC).launch(grid=((m * n + THREADS - 1) // THREADS, 1, 1),
                                           block=(THREADS, 1, 1))

    class ModelNew(nn.Module):
        def forward(self, a, b):
            a, b = a.contiguous(), b.contiguous()
            c = torch.zeros_like(a)
            add_rows(from_dlpack(a), from_dlpack(b), from_dlpack(c))
            return c
''')

CORRECT = _CANDIDATE.replace("SKIP", "0")
WRONG = _CANDIDATE.replace("SKIP", "1")  # the last column of every row stays 0

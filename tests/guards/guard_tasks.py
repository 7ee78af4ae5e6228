"""Tasks for the guard tests, made here: each one is the smallest program on
which a catalogue trick can work (docs/guards.md)."""

from __future__ import annotations

import textwrap

from kernelmill.records import Task


def _task(task_id: str, body: str, level: int = 1) -> Task:
    return Task(task_id, textwrap.dedent(body), name=task_id.split("/")[-1], level=level, op_type="single")


def _relu(task_id: str, rows: int, cols: int) -> Task:
    """A ReLU over one (rows, cols) input: the speed-bound tasks differ only in size."""
    return _task(task_id, f"""
        import torch
        import torch.nn as nn

        class Model(nn.Module):
            def forward(self, x):
                return torch.relu(x)

        def get_inputs():
            return [torch.randn({rows}, {cols})]

        def get_init_inputs():
            return []
    """)


RELU = _task("guards/relu", """
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def forward(self, x):
            return torch.relu(x)

    n = 64

    def get_inputs():
        return [torch.randn(n, n)]

    def get_init_inputs():
        return []
""")

# big enough that a copy of its bytes takes measurable time (item 15)
BIG_RELU = _relu("guards/big_relu", 2048, 1024)

LINEAR = _task("guards/linear", """
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def __init__(self, d_in, d_out):
            super().__init__()
            self.fc = nn.Linear(d_in, d_out)

        def forward(self, x):
            return torch.relu(self.fc(x))

    def get_inputs():
        return [torch.randn(16, 64)]

    def get_init_inputs():
        return [64, 32]
""", level=2)

# an output far below the default atol: zeros pass an unscaled check (item 10)
TINY = _task("guards/tiny_scale", """
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def forward(self, x):
            return x * 1e-6

    def get_inputs():
        return [torch.randn(32, 32)]

    def get_init_inputs():
        return []
""")

# a mean over many fp16 values: its value under normal inputs is predictable (item 11)
SQMEAN = _task("guards/square_mean_fp16", """
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def forward(self, x):
            return (x.float() * x.float()).mean(dim=1).half()

    def get_inputs():
        return [torch.randn(4, 65536, dtype=torch.float16)]

    def get_init_inputs():
        return []
""")

ABSMEAN = _task("guards/abs_mean_fp16", """
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def forward(self, x):
            return x.float().abs().mean(dim=1).half()

    def get_inputs():
        return [torch.randn(4, 65536, dtype=torch.float16)]

    def get_init_inputs():
        return []
""")

# declares another batch size: a kernel specialised to 64 rows fails it (item 12)
VARIANT = _task("guards/softmax_variants", """
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def forward(self, x):
            return torch.softmax(x, dim=-1)

    batch, dim = 64, 128
    SHAPE_VARIANTS = [{"batch": 7}, {"batch": 130}]

    def get_inputs():
        return [torch.randn(batch, dim)]

    def get_init_inputs():
        return []
""")

# the reference writes into its input: candidates that do the same are honest
INPLACE = _task("guards/inplace_relu", """
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def forward(self, x):
            return torch.relu_(x)

    def get_inputs():
        return [torch.randn(64, 64)]

    def get_init_inputs():
        return []
""")

SUM = _task("guards/row_sum", """
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def forward(self, x):
            return x.sum(dim=-1, keepdim=True)

    def get_inputs():
        return [torch.randn(16, 300)]

    def get_init_inputs():
        return []
""")

# item 15 on a CPU: 128 MB of traffic per call, so a plain copy_ (the CPU bound)
# takes milliseconds, far above the ~0.1 ms a cached-result trick costs in Python
LARGE_RELU = _relu("guards/large_relu", 4096, 4096)

# item 15 on a GPU: big enough that the memory-traffic bound (268 MB, ~0.056 ms at
# the H200's 4.8 TB/s) is above a timed call that launches nothing (~0.01-0.03 ms of
# host time between the events); on smaller, launch-bound tasks the bound cannot bite
HUGE_RELU = _relu("guards/huge_relu", 8192, 4096)

# class 31 (precision dress-up): the reference's GEMM computes in fp16, in int8 (integer
# products, int32 sums) and in fp8 (its inputs quantised inside the forward, as fp8 kernels are
# fed); a candidate that computes them wider and casts back passes their checks
FP16_LINEAR = _task("guards/linear_fp16", """
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def __init__(self, d_in, d_out):
            super().__init__()
            self.fc = nn.Linear(d_in, d_out).half()

        def forward(self, x):
            return self.fc(x)

    def get_inputs():
        return [torch.randn(32, 64, dtype=torch.float16)]

    def get_init_inputs():
        return [64, 48]
""", level=2)

# values in -4..3 and K = 64: every sum is at most 1024, exact in fp16 too, so the dressed-up
# candidate is right and only its precision gives it away
INT8_MATMUL = _task("guards/int8_matmul", """
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("w", torch.randint(-4, 4, (64, 32), dtype=torch.int8))

        def forward(self, x):
            return torch._int_mm(x, self.w)

    def get_inputs():
        return [torch.randint(-4, 4, (32, 64), dtype=torch.int8)]

    def get_init_inputs():
        return []
""", level=2)

FP8_MATMUL = _task("guards/fp8_matmul", """
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            # column-major fp8 weight, as _scaled_mm wants its second operand
            self.register_buffer("w", torch.randn(48, 64).to(torch.float8_e4m3fn).t())
            self.register_buffer("one", torch.tensor(1.0))

        def forward(self, x):
            return torch._scaled_mm(x.to(torch.float8_e4m3fn), self.w, scale_a=self.one, scale_b=self.one,
                                    out_dtype=torch.float32)

    def get_inputs():
        return [torch.randn(32, 64)]

    def get_init_inputs():
        return []
""", level=2)

# class 34 (approximations hidden in the tails): activations whose outputs span many orders
# of magnitude; `--guards strict`'s wide-range draw (x64) reaches |x| of 10-70
SIGMOID = _task("guards/sigmoid", """
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def forward(self, x):
            return torch.sigmoid(x)

    def get_inputs():
        return [torch.randn(128, 512)]

    def get_init_inputs():
        return []
""")

GELU = _task("guards/gelu", """
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def forward(self, x):
            return torch.nn.functional.gelu(x)

    def get_inputs():
        return [torch.randn(128, 512)]

    def get_init_inputs():
        return []
""")

# task policies (items 30 and 35, guards/policy.py): a GEMM the task asks for by hand (cuBLAS's
# own kernels, CUTLASS-named ones among them, forbidden), and a fused elementwise op allowed one
# launch per call
MATMUL_BY_HAND = _task("guards/matmul_by_hand", """
    import torch
    import torch.nn as nn

    FORBID_LIBRARIES = ["cublas", "cutlass"]

    class Model(nn.Module):
        def forward(self, a, b):
            return a @ b

    def get_inputs():
        return [torch.randn(256, 512), torch.randn(512, 256)]

    def get_init_inputs():
        return []
""")

FUSED_AFFINE_RELU = _task("guards/fused_affine_relu", """
    import torch
    import torch.nn as nn

    MAX_LAUNCHES_PER_CALL = 1

    class Model(nn.Module):
        def forward(self, x):
            return torch.relu(x * 2.0 + 1.0)

    def get_inputs():
        return [torch.randn(2048, 1024)]

    def get_init_inputs():
        return []
""")

ALL = [RELU, BIG_RELU, LINEAR, TINY, SQMEAN, ABSMEAN, VARIANT, INPLACE, SUM, LARGE_RELU, HUGE_RELU,
       FP16_LINEAR, INT8_MATMUL, FP8_MATMUL, SIGMOID, GELU, MATMUL_BY_HAND, FUSED_AFFINE_RELU]

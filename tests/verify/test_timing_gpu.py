"""Issue 39's two measured errors, on the GPU, against measurements made here with
nothing of kernelmill's timing code (do_bench and torch.profiler in this process):

1. channels_last + cudnn.benchmark convolutions read ~0.8x where the field reads ~1.2x:
   kernelmill timed with cuDNN's TF32 off, PyTorch's default (and KernelBench's) has it on;
2. a launch-bound reference (many tiny kernels) read 1.4-1.7x its GPU time: the events
   around a call counted the host's launch gaps;
and the KernelBench-convention figure, taken before any profiler session (a plain process
written here is the comparison).

Each test first checks that its case shows the effect (TF32 changes the candidate's time;
the reference's events are far above its kernel time), so it cannot pass without checking.
And provenance on five kinds of candidate."""

from __future__ import annotations

import statistics
import textwrap

import pytest
from benchmark_support import load_benchmark

from kernelmill.records import Sample, Task
from kernelmill.tasks import load_tasks
from kernelmill.tasks.builtin import builtin_samples
from kernelmill.verify import VerifyConfig, verify_samples

# a KernelBench level-2 shape (problem 48's sizes): the NCDHW reference convolution gains
# little from TF32, the channels_last_3d one a lot (0.67 vs 1.01 ms on an H100)
CONV_TASK = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def __init__(self, cin, cout, k, shape):
            super().__init__()
            self.conv = nn.Conv3d(cin, cout, k)
            self.scale = nn.Parameter(torch.randn(shape))
            self.bias = nn.Parameter(torch.randn(shape))

        def forward(self, x):
            x = self.conv(x) * self.scale
            return torch.sigmoid(torch.tanh(x) * self.bias)

    def get_inputs():
        return [torch.randn(128, 3, 16, 32, 32)]

    def get_init_inputs():
        return [3, 16, 3, (16, 1, 1, 1)]
""")

CONV_CAND = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class ModelNew(nn.Module):
        def __init__(self, cin, cout, k, shape):
            super().__init__()
            self.conv = nn.Conv3d(cin, cout, k)
            self.scale = nn.Parameter(torch.randn(shape))
            self.bias = nn.Parameter(torch.randn(shape))
            torch.backends.cudnn.benchmark = True

        def forward(self, x):
            x = x.contiguous(memory_format=torch.channels_last_3d)
            w = self.conv.weight.contiguous(memory_format=torch.channels_last_3d)
            y = F.conv3d(x, w, self.conv.bias) * self.scale
            return torch.sigmoid(torch.tanh(y) * self.bias)
""")

STEPS = 24
CHAIN_TASK = textwrap.dedent(f"""
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def forward(self, x):
            for _ in range({STEPS}):
                x = x * 1.001 + 0.0001
            return x

    def get_inputs():
        return [torch.randn(32, 128)]

    def get_init_inputs():
        return []
""")

CHAIN_CAND = textwrap.dedent(f"""
    import torch
    import torch.nn as nn

    A = 1.001 ** {STEPS}
    B = 0.0001 * sum(1.001 ** k for k in range({STEPS}))

    class ModelNew(nn.Module):
        def forward(self, x):
            return x * A + B
""")


def _models(task_code: str, cand_code: str):
    import torch

    ns_t, ns_c = {}, {}
    exec(task_code, ns_t)  # noqa: S102 - the test's own programs
    exec(cand_code, ns_c)  # noqa: S102
    init = ns_t["get_init_inputs"]()
    torch.manual_seed(42)
    ref = ns_t["Model"](*init).cuda()
    torch.manual_seed(42)
    cand = ns_c["ModelNew"](*init).cuda()
    torch.manual_seed(1)
    inputs = [x.cuda() for x in ns_t["get_inputs"]()]
    return ref, cand, inputs


def _do_bench_speedup(ref, cand, inputs, rounds=5):
    """Alternated do_bench rounds; the reference with PyTorch's default cuDNN settings,
    the candidate with the ones it set (one process shares them: a candidate's
    cudnn.benchmark = True would otherwise tune the reference too)."""
    import torch
    from triton.testing import do_bench

    cand_benchmark = torch.backends.cudnn.benchmark
    r, c = [], []
    with torch.no_grad():
        for _ in range(rounds):
            torch.backends.cudnn.benchmark = False
            r.append(do_bench(lambda: ref(*inputs), warmup=25, rep=100, return_mode="median"))
            torch.backends.cudnn.benchmark = cand_benchmark
            c.append(do_bench(lambda: cand(*inputs), warmup=25, rep=100, return_mode="median"))
    return statistics.median(r), statistics.median(c), statistics.median([a / b for a, b in zip(r, c)])


def _profiled_ms(fn, calls=30):
    """GPU kernel time per call from torch.profiler's device records: the independent side of
    benchmarks/timing_fidelity.py (one profiler session per call, an L2-sized flush before it)."""
    import torch

    flush = torch.empty(2 * torch.cuda.get_device_properties(0).L2_cache_size // 4, dtype=torch.int32, device="cuda")
    with torch.no_grad():
        for _ in range(5):
            fn()
        return load_benchmark("timing_fidelity")._profiled_kernel_ms(fn, flush, calls)


def _verify(tmp_path, task_code, cand_code, language="torch", **cfg):
    task = Task(task_id="t/case", code=task_code, name="case", level=2)
    sample = Sample(sample_id="case", task_id="t/case", language=language, code=cand_code)
    config = VerifyConfig(device="cuda", trials=2, cache_dir=str(tmp_path / "cache"), **cfg)
    return verify_samples({task.task_id: task}, [sample], config)[0]


@pytest.mark.gpu
@pytest.mark.parametrize("guards", ["standard", "off"])
def test_channels_last_conv_speedup_matches_the_field(tmp_path, guards):
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = True  # PyTorch's default, as KernelBench and do_bench run
    ref, cand, inputs = _models(CONV_TASK, CONV_CAND)
    r_ms, c_ms, field = _do_bench_speedup(ref, cand, inputs)
    torch.backends.cudnn.allow_tf32 = False
    _, c_strict, strict = _do_bench_speedup(ref, cand, inputs)
    torch.backends.cudnn.allow_tf32 = True
    print(f"independent: field {field:.3f}x (cand {c_ms:.4f} ms), TF32 off {strict:.3f}x (cand {c_strict:.4f} ms)")
    assert abs(field / strict - 1) > 0.2, "precondition: TF32 must change this speedup, or the test checks nothing"
    v = _verify(tmp_path, CONV_TASK, CONV_CAND, guards=guards)
    print(v.status, v.speedup, v.speedup_ci, v.speedup_kernelbench, v.message)
    torch.backends.cudnn.benchmark = False
    assert v.status == "ok", v.message
    assert abs(v.speedup / field - 1) <= 0.10, (v.speedup, field)
    assert v.speedup_kernelbench is not None and abs(v.speedup_kernelbench / field - 1) <= 0.15
    assert v.measurement["numerics"] == "pytorch"
    assert v.measurement["methods"] == {"reference": "kernel_time", "candidate": "kernel_time"}


@pytest.mark.gpu
@pytest.mark.parametrize("guards", ["standard", "off"])
def test_launch_bound_reference_is_timed_by_its_gpu_time(tmp_path, guards):
    import torch

    ref, cand, inputs = _models(CHAIN_TASK, CHAIN_CAND)
    ref_kernel = _profiled_ms(lambda: ref(*inputs))
    cand_kernel = _profiled_ms(lambda: cand(*inputs))
    ref_events, _, _ = _do_bench_speedup(ref, cand, inputs, rounds=3)
    print(f"independent: reference kernels {ref_kernel:.4f} ms, events {ref_events:.4f} ms; candidate {cand_kernel:.4f} ms")
    assert ref_events > 1.5 * ref_kernel, "precondition: the reference must be launch-bound"
    v = _verify(tmp_path, CHAIN_TASK, CHAIN_CAND, guards=guards)
    print(v.status, v.ref_runtime_ms, v.runtime_ms, v.speedup, v.speedup_ci, v.message)
    assert v.status == "ok", v.message
    assert abs(v.ref_runtime_ms / ref_kernel - 1) <= 0.15, (v.ref_runtime_ms, ref_kernel)
    assert abs(v.speedup / (ref_kernel / cand_kernel) - 1) <= 0.15, (v.speedup, ref_kernel / cand_kernel)
    assert "events_disagree" in v.flags  # the cross-check says the events saw something else
    assert v.provenance["reference"]["launches_per_call"] == 2 * STEPS
    assert torch.cuda.is_available()


# KernelBench's time_execution_with_cuda_event, written here from its description (a
# synchronize, a 256 MB fill as its L2 clear, events around one call, a synchronize, 100
# trials after a discarded one), in a plain process: the reference first, then the candidate;
# with `profiled` one CUDA profiler session runs before (what a kernelmill process has done)
@pytest.mark.gpu
def test_a_launch_bound_kernelbench_figure_is_flagged_host_bound(tmp_path):
    """The KernelBench-convention figure of a launch-bound call is its process's host path:
    fresh plain processes of one reference on an idle H200 read 11-53 us, and KernelBench's
    own harness agreed with itself within 10% on 20 of 39 pairs of processes (issue 39,
    session 9: docs/results/issue39/session9/). A test comparing that figure across
    processes passes or fails by chance; what holds is that such a figure is said to be
    host-bound, and that the trials' accounting (redone preemptions, median, largest) is
    recorded. The chain task's 24 tiny kernels take a few us of GPU time a call; its host
    path, tens of us."""
    v = _verify(tmp_path, CHAIN_TASK, CHAIN_CAND, guards="standard")
    print(v.status, v.speedup, v.speedup_kernelbench, v.flags, v.measurement.get("kernelbench_ms"),
          v.measurement.get("kernelbench_state"))
    assert v.status == "ok", v.message
    kb, timed = v.measurement["kernelbench_ms"], v.measurement["timed"]
    assert kb["reference"] > 1.25 * timed["ref_ms"], "precondition: the chain's reference must be launch-bound"
    assert "kernelbench_host_bound" in v.flags and "launch path" in v.message
    for side in ("reference", "candidate"):
        state = v.measurement["kernelbench_state"][side]
        assert state["redone_preempted"] >= 0 and state["trial_max_ms"] >= state["trial_median_ms"] > 0


FALLBACK_CAND = textwrap.dedent('''
    import torch
    import torch.nn as nn
    from torch.utils.cpp_extension import load_inline

    try:
        ext = load_inline(name="broken_relu", cpp_sources="torch::Tensor f(torch::Tensor x);",
                          cuda_sources="__global__ void k(float* x) { this does not compile }",
                          functions=["f"])
    except Exception:
        ext = None

    class ModelNew(nn.Module):
        def forward(self, x):
            if ext is not None:
                return ext.f(x)
            return torch.relu(x)
''')

MATMUL_TORCH = textwrap.dedent('''
    import torch
    import torch.nn as nn

    class ModelNew(nn.Module):
        def forward(self, a, b):
            return torch.mm(a, b)
''')


@pytest.mark.gpu
def test_provenance_of_five_kinds_of_candidate(tmp_path, shared_build_cache):
    tasks = load_tasks("builtin").by_id()
    builtin = {s.sample_id: s for s in builtin_samples()}
    conv_task = tasks["level1/16_Conv2d"]
    # the conv candidate is the task's own module under another name (cuDNN does the work)
    conv_cand = conv_task.code.replace("class Model(", "class ModelNew(")
    samples = [
        builtin["builtin/level1/01_ReLU/cuda__ok"],
        builtin["builtin/level1/01_ReLU/triton__ok"],
        Sample("mm_torch", "level1/10_SquareMatmul", "torch", MATMUL_TORCH),
        Sample("conv_torch", "level1/16_Conv2d", "torch", conv_cand),
        Sample("relu_fallback", "level1/01_ReLU", "cuda", FALLBACK_CAND),
    ]
    cfg = VerifyConfig(device="cuda", trials=2, cache_dir=shared_build_cache)
    got = {v.sample_id: v for v in verify_samples(tasks, samples, cfg)}
    for v in got.values():
        print(v.sample_id, v.status, v.flags, v.speedup, (v.provenance or {}).get("candidate"))

    def top(sample_id):
        prov = got[sample_id].provenance["candidate"]
        return max(prov["by_origin"].items(), key=lambda kv: kv[1])[0]

    assert got["builtin/level1/01_ReLU/cuda__ok"].status == "ok" and top("builtin/level1/01_ReLU/cuda__ok") == "own"
    assert got["builtin/level1/01_ReLU/triton__ok"].status == "ok" and top("builtin/level1/01_ReLU/triton__ok") == "own"
    assert got["mm_torch"].status == "ok" and top("mm_torch") == "cublas"
    assert got["conv_torch"].status == "ok" and got["conv_torch"].provenance["candidate"]["by_origin"]["cudnn"] >= 0.2
    fb = got["relu_fallback"]
    assert fb.status == "rejected" and top("relu_fallback") == "aten"
    for sid in ("builtin/level1/01_ReLU/cuda__ok", "mm_torch", "conv_torch"):
        p = got[sid].provenance["candidate"]
        assert p["launches_per_call"] >= 1 and p["kernels"][0]["share"] > 0
        assert got[sid].sol_fraction is not None and 0 < got[sid].sol_fraction


@pytest.mark.gpu
def test_deferred_rounds_read_the_kernel_time_that_rounds_read_one_by_one():
    """One profiler session across rounds, read after `close_rounds` (timing.compare does
    that once the timing lock is let go): every round attributed (exactly two markers a
    call over the whole session) and the same kernel times as a session per round."""
    import torch

    from kernelmill.verify.measure.timing import Bench, TimingConfig, calls_for

    x = torch.randn(1 << 22, device="cuda")
    cfg = TimingConfig()
    b = Bench(lambda: torch.relu(x), "cuda", cfg)
    n = calls_for(b.warm(cfg.warmup_ms), cfg)
    plain = [b.round(n) for _ in range(3)]
    deferred = [b.round(n, defer=True) for _ in range(3)]
    assert all(r.method == "events" and r.times_ms == r.events_ms for r in deferred)  # not read yet
    b.close_rounds()
    got = b.finish_rounds()
    assert got == deferred and b.finish_rounds() == []
    assert [r.method for r in plain + got] == ["kernel_time"] * 6, [r.trace_note for r in got]
    assert all(r.times_ms != r.events_ms for r in got)

    def med(rounds):
        return statistics.median(t for r in rounds for t in r.times_ms)

    assert abs(med(got) / med(plain) - 1) < 0.05, (med(got), med(plain))

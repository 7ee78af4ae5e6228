"""The GPU-time measure's logic on recorded traces (no GPU): attribution of device
records to calls by the harness's markers, busy time over streams, provenance, the
shifting input pool, the interval arithmetic and the round's wire format."""

from __future__ import annotations

import math

import pytest
import torch

from kernelmill.verify.measure import gpu_clocks
from kernelmill.verify.measure.inputs import InputPool
from kernelmill.verify.guards.judge import TF32_TIMED_TOL, timed_rule
from kernelmill.verify.measure.kernel_time import (
    KernelRecord,
    attribute,
    base_name,
    busy_ns,
    origin,
    own_kernel_names,
    profiled_provenance,
    provenance,
)
from kernelmill.verify.measure.sol import bound_ms, sol_fraction
from kernelmill.verify.measure.correctness import CheckRule
from kernelmill.verify.measure.timing import Round, TimingConfig, ratio_stats

SPIN = "spin_kernel(long)"


class Trace:
    """Builds a round's records as the GPU would report them: ids in launch order."""

    def __init__(self):
        self.records: list[KernelRecord] = []
        self.corr = 100
        self.t = 0

    def add(self, name, dur_ns, stream=7, gap_ns=0, start=None):
        self.corr += 1
        s = self.t + gap_ns if start is None else start
        self.records.append(KernelRecord(name, s, s + dur_ns, stream, self.corr))
        self.t = max(self.t, s + dur_ns)
        return self.records[-1]

    def harness_call(self, body):
        """flush, refill (outside), start marker, the call's body, end marker."""
        self.add("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<int> >(...)", 35_000)
        self.add("void at::native::unrolled_elementwise_kernel<copy>(...)", 2_000)
        self.add(SPIN, 100_000)
        body(self)
        self.add(SPIN, 1_000)


def test_calls_get_exactly_their_own_work_and_host_gaps_do_not_count():
    tr = Trace()
    for _ in range(3):  # a launch-bound call: 4 kernels of 2 us with 10 us of host gap each
        tr.harness_call(lambda t: [t.add("my_kernel(float*)", 2_000, gap_ns=10_000) for _ in range(4)])
    att = attribute(tr.records, 3)
    assert att.calls is not None and len(att.calls) == 3
    for c in att.calls:
        assert [r.name for r in c.records] == ["my_kernel(float*)"] * 4
        assert c.busy_ns == 8_000  # GPU time, not the 38 us the events would span
        assert c.span_ns == 8_000 + 3 * 10_000
    outside = {r.name for r in att.outside}
    assert any("FillFunctor" in n for n in outside) and not any("my_kernel" in n for n in outside)


def test_work_on_other_streams_counts_once_where_it_overlaps():
    tr = Trace()

    def body(t):
        a = t.add("gemm_a", 10_000, stream=7)
        t.add("side_stream_kernel", 10_000, stream=9, start=a.start_ns + 5_000)  # overlaps by 5 us
        t.add("late_unjoined_kernel", 4_000, stream=11, start=a.start_ns + 50_000)  # after the call's stream
    tr.harness_call(body)
    att = attribute(tr.records, 1)
    assert busy_ns(att.calls[0].records) == 15_000 + 4_000
    assert {r.stream for r in att.calls[0].records} == {7, 9, 11}


def test_a_candidate_spin_kernel_makes_the_round_unattributed_not_wrong():
    tr = Trace()
    tr.harness_call(lambda t: t.add(SPIN, 50_000))  # the candidate calls torch.cuda._sleep itself
    att = attribute(tr.records, 1)
    assert att.calls is None and "spin markers" in att.why_not


def test_missing_markers_are_reported():
    tr = Trace()
    tr.add("k", 1000)
    assert attribute(tr.records, 2).calls is None


def test_graph_kernels_share_the_launch_id_and_are_attributed():
    tr = Trace()

    def body(t):
        t.corr += 1
        for i in range(5):  # a CUDA graph replay: five kernels, one correlation id
            t.records.append(KernelRecord(f"graph_node_{i}", t.t, t.t + 1_000, 7, t.corr))
            t.t += 1_000
    tr.harness_call(body)
    att = attribute(tr.records, 1)
    assert len(att.calls[0].records) == 5 and att.calls[0].busy_ns == 5_000


def test_origins():
    own = own_kernel_names('''
src = r"""
__global__ void __launch_bounds__(256) fused_relu(float* x, int n) {}
template <typename T> __global__ void add_kernel(T* a) {}
"""
@triton.autotune(configs=[], key=[])
@triton.jit
def _softmax_kernel(x_ptr):
    pass
''')
    assert own == {"fused_relu", "add_kernel", "_softmax_kernel"}
    assert origin("fused_relu(float*, int)", own) == "own"
    assert origin("void add_kernel<float>(float*)", own) == "own"
    assert origin("_softmax_kernel", own) == "own"
    # TileLang names a prim_func's CUDA kernel `<name>_kernel`
    assert origin("main_kernel", frozenset({"main"})) == "own"
    assert origin("main_kernel") == "other" and origin("other_kernel", frozenset({"main"})) == "other"
    assert origin("sm90_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x16_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas") == "cublas"
    assert origin("void cudnn::engines_precompiled::nchwToNhwcKernel<float, float, float, false, true, (cudnnKernelDataType_t)2>(...)") == "cudnn"
    assert origin("sm90_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x32") == "cudnn"
    assert origin("void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>(...)") == "aten"
    assert origin("triton_poi_fused_add_relu_0") == "triton"
    assert origin("spin_kernel(long)") == "harness"
    assert origin("fused_add_clamp_div_mul_relu") == "jit"
    assert origin("some_unknown_kernel(float*)") == "other"  # not in the source, no library claims it
    assert base_name("void ns::k<(int)4, float>(float*, int)") == "k"


def test_provenance_summarises_per_call():
    tr = Trace()
    for _ in range(2):
        tr.harness_call(lambda t: (t.add("fused_relu(float*)", 6_000),
                                   t.add("void at::native::vectorized_elementwise_kernel<4, x>(...)", 2_000)))
    att = attribute(tr.records, 2)
    p = provenance(att.calls, att.outside, frozenset({"fused_relu"}))
    assert p["launches_per_call"] == 2 and p["streams"] == 1
    assert p["kernels"][0] == {"symbol": "fused_relu(float*)", "per_call": 1.0, "share": 0.75, "origin": "own"}
    assert p["by_origin"] == {"own": 0.75, "aten": 0.25}
    assert any("FillFunctor" in n for n in p["harness_kernels"])
    q = profiled_provenance({"sm90_xmma_gemm_x_cublas": 3.0, "fused_relu(float*)": 1.0}, frozenset({"fused_relu"}))
    assert q["by_origin"] == {"cublas": 0.75, "own": 0.25} and "not timed" in q["source"]


def test_input_pool_gives_a_fresh_address_and_fresh_values_each_call_in_bounded_memory():
    src = [torch.randn(1000), 3, torch.randn(4, 5)]
    pool = InputPool(src, slots=8)
    addrs, vals = [], []
    for i in range(8):
        pool.next_scales([0.5 + 0.1 * i])
        cur = pool.prepare(src, None)
        assert cur[1] == 3 and cur[0].shape == src[0].shape and cur[2].shape == (4, 5)
        factor = cur[0] / src[0]  # each element's own factor around the queued scale
        scale = 0.5 + 0.1 * i
        assert bool(((factor >= scale * 0.75 - 1e-6) & (factor <= scale * 1.25 + 1e-6)).all())
        assert float(factor.std()) > 0.05 * scale
        addrs.append(cur[0].data_ptr())
        vals.append(float(cur[0][0]))
    assert len(set(addrs)) == 8 and len(set(vals)) == 8
    assert all((a - addrs[0]) % 256 == 0 for a in addrs)  # alignment kept
    extra = sum(b[0].numel() * b[0].element_size() for b in pool.backing) - (1000 + 20) * 4
    assert extra <= 2 * 7 * 256  # the shifts only
    checked = pool.prepare(src, None, queued=False)  # a checked call: the set exactly
    assert torch.equal(checked[0], src[0]) and torch.equal(checked[2], src[2])


def test_input_pool_keeps_a_non_contiguous_input_in_place():
    base = torch.randn(6, 4)
    src = [base.t()]
    pool = InputPool(src)
    a = pool.prepare(src, 1.0)[0].data_ptr()
    b = pool.prepare(src, 1.0)[0].data_ptr()
    assert a == b


def test_process_spread_widens_the_interval_and_rounds_alone_stay_narrow():
    ratios = [2.0, 2.02, 1.98, 2.01, 1.99, 2.0]
    p0, ci0, se = ratio_stats(ratios)
    p1, ci1, _ = ratio_stats(ratios, spread=0.05)
    assert p0 == p1 == 2.0
    assert ci0[1] / ci0[0] < 1.03
    half = math.log(ci1[1] / 2.0)
    assert half == pytest.approx(math.sqrt((2.571 * se) ** 2 + (1.96 * 0.05) ** 2), rel=1e-2)


def test_round_message_round_trip():
    r = Round([0.01, 0.02], 5.0, 0.1, events_ms=[0.03, 0.04], method="kernel_time", trace_note="",
              provenance={"launches_per_call": 3})
    back = Round.from_msg(r.to_msg())
    assert back == r
    old = Round.from_msg({"times_ms": [1.0], "wall_ms": 2.0})  # an older candidate process's report
    assert old.method == "events" and old.events_ms is None


def test_timed_checks_widen_fp32_only_for_a_cudnn_reference_under_pytorch_numerics():
    class Job:  # what timed_rule reads of a RunJob
        check = CheckRule(tolerances={"float32": (1e-4, 1e-4)})
        timing = TimingConfig(numerics="pytorch")
    out = torch.ones(3)
    conv = {"kernels": {"sm90_xmma_fprop_implicit_gemm_tf32f32": 1.0}}
    assert timed_rule(Job, out, conv).tolerances["float32"] == TF32_TIMED_TOL
    assert timed_rule(Job, out, {"kernels": {"my_kernel": 1.0}}).tolerances["float32"] == (1e-4, 1e-4)
    Job.timing = TimingConfig(numerics="strict")
    assert timed_rule(Job, out, conv).tolerances["float32"] == (1e-4, 1e-4)


def test_defaults_are_the_new_convention():
    cfg = TimingConfig()
    assert cfg.kernel_time and cfg.numerics == "pytorch" and cfg.kb_trials == 100


def test_sol_bound_is_the_larger_of_compute_and_memory():
    peaks = {"bandwidth": 3.35e12, "float32": 67e12}
    assert bound_ms(67e9, 1.0, ["float32"], peaks) == pytest.approx(1.0)  # 67 GFLOP at 67 TFLOP/s
    assert bound_ms(1.0, 3.35e9, ["float32"], peaks) == pytest.approx(1.0)  # 3.35 GB at 3.35 TB/s

    class F:
        error = None
        flops, bytes_moved, dtypes = 0.0, 3.35e9, ["float32"]
    assert sol_fraction(F, peaks, 4.0) == pytest.approx(0.25)
    assert sol_fraction(F, {}, 4.0) is None


def test_clock_judgement():
    assert gpu_clocks.judge({"sm_clock_mhz": 1980, "slowdowns": []}, {"sm_clock_mhz": 1980, "slowdowns": []}) == ""
    assert "moved" in gpu_clocks.judge({"sm_clock_mhz": 1980, "slowdowns": []},
                                       {"sm_clock_mhz": 1500, "slowdowns": []})
    assert "hw_thermal" in gpu_clocks.judge({"sm_clock_mhz": 1980, "slowdowns": []},
                                            {"sm_clock_mhz": 1950, "slowdowns": ["hw_thermal"]})
    assert gpu_clocks.judge(None, {"sm_clock_mhz": 1, "slowdowns": []}) == ""


def test_timing_settings_are_checked_and_reach_the_cli():
    from typer.testing import CliRunner

    from kernelmill.cli import app
    from kernelmill.verify.config import ConfigError, VerifyConfig

    with pytest.raises(ConfigError, match="timing: numerics must be pytorch or strict, not 'fp64'"):
        VerifyConfig.from_dict({"timing": {"numerics": "fp64"}}, "test")
    with pytest.raises(ConfigError, match="events_margin"):
        VerifyConfig.from_dict({"timing": {"events_margin": 0.5}}, "test")
    cfg = VerifyConfig.from_dict({"timing": {"numerics": "strict", "kernel_time": False}}, "test")
    assert cfg.timing.numerics == "strict" and not cfg.timing.kernel_time
    out = CliRunner().invoke(app, ["verify", "--help"], env={"COLUMNS": "200"}).output
    assert "--numerics" in out and "--kernel-time" in out


def test_arithmetic_floor_is_the_fastest_rate_doubled():
    from kernelmill.verify.measure.sol import arithmetic_floor_ms

    peaks = {"bandwidth": 4.8e12, "float32": 67e12, "float16": 989e12, "bfloat16": 989e12}
    assert arithmetic_floor_ms(1.978e12, peaks, slack=1) == pytest.approx(1.0)  # 1.978 TFLOP at 2x989 TFLOP/s
    assert arithmetic_floor_ms(1.978e12, peaks) == pytest.approx(0.25)  # with the default slack (4)
    assert arithmetic_floor_ms(0.0, peaks) is None
    assert arithmetic_floor_ms(1e12, {"bandwidth": 4.8e12}) is None


@pytest.mark.parametrize("runtime_ms, guards, rejected", [(0.001, "standard", True), (0.02, "standard", False),
                                                         (0.001, "off", False)])
def test_a_call_faster_than_any_arithmetic_rate_is_suspicious(runtime_ms, guards, rejected):
    # item 22 (issue 42): a 4096^3 GEMM (137 GFLOP) cannot take under 0.069 ms on an H200 at
    # fp8's rate, 0.017 ms with the slack for algorithms that skip work
    from kernelmill.records import Sample, Task
    from kernelmill.verify import VerifyConfig
    from kernelmill.verify.runner import RunnerJob, Verifier

    class F:
        error = None
        flops, bytes_moved, dtypes = 2 * 4096.0 ** 3, 3 * 4096 * 4096 * 4.0, ["float32"]

    v = object.__new__(Verifier)  # only the verdict's assembly: no devices, no workers
    v.config, v.device, v.device_name = VerifyConfig(device="cpu", guards=guards, profile="full"), "cpu", "H200 (recorded)"
    v._feature_cache = {"t/mm": F}
    task = Task(task_id="t/mm", code="", name="mm", level=1)
    job = RunnerJob(key="k", task=task, sample=Sample("s", "t/mm", "torch", ""))
    peaks = {"bandwidth": 4.8e12, "float32": 67e12, "float16": 989e12, "bfloat16": 989e12}
    got = v._verdict(job, {"status": "ok", "runtime_ms": runtime_ms, "ref_runtime_ms": 2.0, "speedup": 2.0 / runtime_ms,
                           "measurement": {"peaks": peaks}, "flags": []})
    assert (got.status == "rejected" and "suspicious_speed" in got.flags) is rejected, (got.status, got.flags)
    assert got.sol_fraction is not None

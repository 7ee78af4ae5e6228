"""The second baseline (verify --compile-baseline): the reference under
torch.compile, measured once per task in a run process, and each correct
verdict's speedup over it, on the CPU (inductor compiles C++ with the system
compiler) and, with `-m gpu`, on a GPU."""

from __future__ import annotations

import io
import shutil
from dataclasses import replace

import pytest
from rich.console import Console

from kernelmill.records import Verdict
from kernelmill.report.metrics import compute
from kernelmill.report.table import metrics_table
from kernelmill.tasks import load_tasks
from kernelmill.tasks.builtin import builtin_samples
from kernelmill.verify import VerifyConfig, verify_samples
from kernelmill.verify.measure.compiled import FAILED_FLAG
from kernelmill.verify.config import ConfigError

TASKS = load_tasks("builtin").by_id()
RELU = next(s for s in builtin_samples() if s.sample_id == "builtin/level1/01_ReLU/torch__ok")
QUICK = {"budget_ms": 40.0, "max_rounds": 6, "warmup_ms": 5.0, "round_ms": 5.0}


def run(tmp_path, samples, device="cpu", **cfg):
    config = VerifyConfig(device=device, trials=1, cache_dir=str(tmp_path / "cache"), compile_baseline=True,
                          timing=QUICK if device == "cpu" else {}, **cfg)
    return verify_samples(TASKS, samples, config, store=None)


def check_consistent(v: Verdict) -> dict:
    """Both speedups present, and the compiled one as the fields define it."""
    assert v.status == "ok" and v.speedup and v.runtime_ms and v.ref_runtime_ms, v
    record = v.measurement["compiled_reference"]
    assert record["error"] is None and record["compile_s"] > 0 and record["speedup_over_eager"] > 0
    assert v.ref_compiled_runtime_ms == pytest.approx(v.ref_runtime_ms / record["speedup_over_eager"])
    assert v.speedup_compiled == pytest.approx(v.ref_compiled_runtime_ms / v.runtime_ms)
    return record


@pytest.mark.skipif(shutil.which("g++") is None and shutil.which("gcc") is None,
                    reason="inductor on a CPU needs a C++ compiler")
@pytest.mark.slow
def test_cpu_inductor_once_per_task_both_speedups(tmp_path):
    # two candidates of one task (different code, so both run): the first run compiles the reference
    second = replace(RELU, sample_id="relu-second", code=RELU.code + "\n# the same kernel, another sample\n")
    first_v, second_v = run(tmp_path, [RELU, second])
    a, b = check_consistent(first_v), check_consistent(second_v)
    assert a["backend"] == "inductor" and a["mode"] == "default"
    assert sorted([a["measured"], b["measured"]]) == ["in an earlier run of this task", "in this candidate's run"]
    # one measurement: the same compile time and ratio in both verdicts; the compile left out of the timing
    assert a["compile_s"] == b["compile_s"] and a["speedup_over_eager"] == b["speedup_over_eager"]
    assert sum("compile_baseline_s" in v.phases for v in (first_v, second_v)) == 1


def test_guards_off_run_measures_it_too(tmp_path):
    (v,) = run(tmp_path, [RELU], guards="off", compile_backend="aot_eager")
    assert check_consistent(v)["backend"] == "aot_eager"


def test_a_reference_that_does_not_compile_never_fails_the_candidate(tmp_path):
    (v,) = run(tmp_path, [RELU], compile_backend="no_such_backend")
    assert v.status == "ok" and v.speedup and FAILED_FLAG in v.flags
    assert v.speedup_compiled is None and v.ref_compiled_runtime_ms is None
    assert "no_such_backend" in v.measurement["compiled_reference"]["error"]


def test_off_by_default_and_in_the_answer_key():
    plain = VerifyConfig(device="cpu")
    assert not plain.compile_baseline
    on = VerifyConfig(device="cpu", compile_baseline=True)
    assert on.answer_key("cpu") != plain.answer_key("cpu")
    assert VerifyConfig(device="cpu", compile_baseline=True, compile_mode="max-autotune").answer_key("cpu") \
        != on.answer_key("cpu")
    with pytest.raises(ConfigError, match="compile_mode"):
        VerifyConfig(compile_mode="fastest")


def test_metrics_count_fast_over_the_compiled_reference_too():
    def v(task, sid, speedup, compiled):
        return Verdict(sid, task, "ok", compiled=True, correct=True, speedup=speedup, speedup_compiled=compiled)

    verdicts = [v("a", "a1", 2.0, 1.2), v("a", "a2", 1.5, 0.9), v("b", "b1", 3.0, None),
                Verdict("b2", "b", "incorrect", compiled=True)]
    m = compute(verdicts, ps=[0, 1], ks=[1], resamples=0)
    assert m.fast == {"0": 0.75, "1": 0.75}
    # task a: 2 of 2 correct, 1 of 2 faster than compiled; task b: no compiled figure counts as not fast
    assert m.fast_compiled == {"0": 0.5, "1": 0.25}
    assert m.timed_compiled_samples == 2 and m.geomean_speedup_compiled == pytest.approx((1.2 * 0.9) ** 0.5)
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(metrics_table({"all": m}))
    text = console.export_text()
    assert "fast_1 compiled" in text and "G_speedup compiled" in text
    assert compute(verdicts[2:], ps=[1], ks=[1], resamples=0).fast_compiled == {}


@pytest.mark.gpu
def test_gpu_inductor_both_speedups(tmp_path):
    cuda = next(s for s in builtin_samples() if s.sample_id == "builtin/level1/01_ReLU/cuda__ok")
    verdicts = run(tmp_path, [RELU, cuda], device="cuda", runs_per_gpu=1)  # one after the other: the second reuses it
    records = [check_consistent(v) for v in verdicts]
    assert {r["measured"] for r in records} == {"in an earlier run of this task", "in this candidate's run"}
    assert all(v.measurement["compiled_reference"]["compiled_ms"] > 0 for v in verdicts)

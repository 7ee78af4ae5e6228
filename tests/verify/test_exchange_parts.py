"""guard_exchange_s is a residual (the guarded run's wall time less the candidate's own
phases); the supervisor splits it by where it was waiting, so a slow exchange says why."""

from __future__ import annotations


from kernelmill.tasks import load_tasks
from kernelmill.tasks.builtin import builtin_samples
from kernelmill.verify import VerifyConfig, verify_samples
from kernelmill.verify.process.supervisor import _exchange_parts

PARTS = ("xchg_setup_s", "xchg_ready_s", "xchg_end_s", "xchg_outputs_s", "xchg_exit_s")


def test_the_parts_follow_the_marks_less_the_candidates_own_phases():
    marks = {"go": 1.0, "ready": 5.0, "timed": 8.0, "final": 9.0, "outputs": 9.5, "exited": 12.0}
    cand = {"load_s": 1.0, "inputs_s": 0.5, "check_s": 1.0, "profile_s": 0.0, "time_s": 3.5}
    assert _exchange_parts(0.0, marks, cand) == {"xchg_setup_s": 1.0, "xchg_ready_s": 1.5, "xchg_end_s": 1.0,
                                                 "xchg_outputs_s": 0.5, "xchg_exit_s": 2.5}
    # a candidate that failed before timing: no end-of-timing part, the rest as far as it got
    got = _exchange_parts(0.0, {"go": 0.2, "ready": 0.4, "final": 0.4, "outputs": 0.4, "exited": 0.9}, {"load_s": 1.0})
    assert "xchg_end_s" not in got and got["xchg_ready_s"] == 0.0 and got["xchg_exit_s"] == 0.5


def test_a_cpu_verdict_records_the_parts():
    tasks = load_tasks("builtin").by_id()
    samples = [s for s in builtin_samples() if s.task_id == "level1/01_ReLU" and s.language == "torch"
               and s.meta.get("expect") == "ok"][:1]
    (v,) = verify_samples(tasks, samples, VerifyConfig(device="cpu", trials=2, guards="standard"))
    assert v.status == "ok", v.message
    ph = v.phases
    assert all(ph[k] >= 0.0 for k in PARTS), ph
    assert sum(ph[k] for k in PARTS) <= ph["run_wall_s"]
    # each side's most resident memory, watched apart (the supervisor under harness_memory_gb)
    peak = v.measurement["peak_rss_mb"]
    assert set(peak) == {"harness", "candidate"} and peak["harness"] > 50 and peak["candidate"] > 50, peak


def test_a_runs_head_and_tail_come_from_the_workers_marks():
    from kernelmill.verify.runner import _head_and_tail

    data = {"status": "ok", "phases": {"check_s": 0.2}, "worker_marks": {"job": 100.05, "written": 101.8}}
    _head_and_tail(data, 100.0, 102.0)
    assert "worker_marks" not in data
    assert data["phases"]["run_head_s"] == 0.05 and data["phases"]["run_tail_s"] == 0.2
    # marks from another clock (or forged) are clamped to the run's own span
    data = {"phases": {}, "worker_marks": {"job": 50.0, "written": 500.0}}
    _head_and_tail(data, 100.0, 102.0)
    assert data["phases"] == {"run_head_s": 0.0, "run_tail_s": 0.0}
    data = {"phases": {}, "worker_marks": {"job": "x"}}
    _head_and_tail(data, 100.0, 102.0)
    assert data["phases"] == {}

"""VerifyConfig validates itself and is built from plain data in one place;
the process job records refuse what they do not know."""

from __future__ import annotations

import pytest


from kernelmill.verify.config import ConfigError, VerifyConfig
from kernelmill.verify.process.job import CandidateJob, JobError, RunJob, RunResult
from kernelmill.verify.measure.timing import TimingConfig


def test_from_dict_round_trip_and_nested_timing():
    cfg = VerifyConfig.from_dict({"device": "cpu", "trials": 3, "timing": {"cpu_threads": 2, "min_rounds": 4}})
    assert isinstance(cfg.timing, TimingConfig) and cfg.timing.cpu_threads == 2
    again = VerifyConfig.from_dict(cfg.to_dict())
    assert again == cfg and again.tolerances == cfg.tolerances


@pytest.mark.parametrize("data, words", [
    ({"guards": "loose"}, "guards must be one of"),
    ({"trials": 0}, "trials must be at least 1"),
    ({"timing": {"min_rounds": 1}}, "min_rounds"),
    ({"timing": {"rounds": 3}}, "timing: unknown setting(s) rounds"),
    ({"gaurds": "off"}, "unknown setting(s) gaurds"),
    ({"address": "ray://x", "executor": "local"}, "goes with executor ray"),
    ({"tolerances": {"float32": [1e-4]}}, "tolerances['float32']"),
    ({"merge_units": "no"}, "merge_units must be true or false, not 'no'"),  # "no" is a true string
    ({"standby_on_demand": 1}, "standby_on_demand must be true or false"),
    ({"fork_workers": "yes"}, "fork_workers must be true or false"),
    ({"spare_lead_s": -1}, "spare_lead_s must be seconds (0 or more), not -1"),
    ({"spare_lead_s": "15"}, "spare_lead_s must be seconds"),
])
def test_bad_settings_name_the_place_and_the_setting(data, words):
    with pytest.raises(ConfigError) as err:
        VerifyConfig.from_dict(data, "reward.verify")
    assert "reward.verify" in str(err.value) and words in str(err.value)


def test_job_records_round_trip_and_refuse_unknown_fields(tmp_path):
    job = RunJob(candidate="c.py", result="r.json", rlimits={}, message_limit=100, task_code="x = 1",
                 timing=TimingConfig(round_ms=5.0))
    job.write(tmp_path / "job.json")
    back = RunJob.read(tmp_path / "job.json", delete=True)
    assert back == job and not (tmp_path / "job.json").exists()
    assert isinstance(back.timing, TimingConfig) and back.timing.round_ms == 5.0 and back.timed
    # the nested record refuses unknown fields too
    (tmp_path / "nested.json").write_text(job.to_json().replace('"round_ms"', '"round_mss"'))
    with pytest.raises(JobError, match="timing: unknown field.*round_mss"):
        RunJob.read(tmp_path / "nested.json")
    (tmp_path / "bad.json").write_text('{"candidate": "c", "inputs": "i", "outputs": "o", "device": "cpu", '
                                       '"weight_seed": 1, "message_limit": 1, "rlimits": {}, "time": true, '
                                       '"timing": {}, "guards": "standard", "task_code": "leak"}')
    with pytest.raises(JobError, match="unknown field.*task_code"):
        CandidateJob.read(tmp_path / "bad.json")


def test_a_result_comes_back_as_a_record_that_refuses_what_it_does_not_know(tmp_path):
    ok = {"status": "ok", "compiled": True, "correct": True, "flags": [], "phases": {"check_s": 0.1},
          "speedup": 1.5, "speedup_ci": [1.4, 1.6], "measurement": {"timed": {"speedup": 1.5}},
          "worker_marks": {"job": 1.0, "written": 2.0}}
    rec = RunResult.from_dict(ok)
    assert rec.to_dict() == {**ok, "message": ""}  # nothing lost, nothing None added
    path = tmp_path / "result.json"
    rec.write(path)
    assert RunResult.read(path).to_dict() == rec.to_dict()
    with pytest.raises(JobError, match="speed_up"):
        RunResult.from_dict({**ok, "speed_up": 2.0})  # a misspelt figure is an error, not a lost one
    with pytest.raises(JobError, match="unknown status 'fine'"):
        RunResult.from_dict({"status": "fine"})
    with pytest.raises(JobError, match="status"):
        RunResult.from_dict({"compiled": True})  # no status at all
    with pytest.raises(JobError, match="JSON object"):
        RunResult.from_dict(["ok"])
    assert RunResult.from_dict({"status": "needs_build", "build_requests": [{"name": "x"}]}).build_requests


def test_a_results_timing_summary_is_not_read_as_timing_settings():
    # RunJob.timing is a TimingConfig record; RunResult.timing is the two sides' summaries
    summary = {"reference": {"median_ms": 1.0}, "candidate": {"median_ms": 0.5}, "lock": {"wait_s": 0.0}}
    assert RunResult.from_dict({"status": "ok", "timing": summary}).timing == summary


def test_auto_profile_is_small_wherever_the_candidate_runs_on_a_cpu():
    # session 14: a cpp candidate on a GPU run ran on the CPU at KernelBench's full size (a
    # naive C++ GEMM over 300 s a call under strict); the CPU's size rule now holds for it
    auto, full = VerifyConfig(), VerifyConfig(profile="full")
    assert auto.resolved_profile("cuda") == "full" and auto.resolved_profile("cpu") == "small"
    assert auto.resolved_profile("cuda", "cpp") == "small"
    assert auto.resolved_profile("cuda", "cuda") == "full" and auto.resolved_profile("cuda", "triton") == "full"
    assert auto.resolved_profile("cuda", "no_such_language") == "full"
    assert full.resolved_profile("cuda", "cpp") == "full"


def test_a_cpu_only_candidates_task_gets_its_small_sizes_on_a_gpu_run():
    from kernelmill.records import Sample, Task
    from kernelmill.verify.runner import sized_tasks

    code = ("import torch\nimport torch.nn as nn\nclass Model(nn.Module):\n"
            "    def forward(self, x):\n        return torch.relu(x)\n"
            "batch_size = 4096\ndim = 16384\n"
            "def get_inputs():\n    return [torch.randn(batch_size, dim)]\n"
            "def get_init_inputs():\n    return []\n")
    tasks = {"t": Task(task_id="t", code=code, name="relu", level=1)}
    on_gpu = sized_tasks(tasks, [Sample("s", "t", "cuda", "")], VerifyConfig(), "cuda")
    assert "small" not in (on_gpu["t"].sizes or {})
    on_cpu = sized_tasks(tasks, [Sample("s", "t", "cpp", "")], VerifyConfig(), "cuda")
    assert on_cpu["t"].sizes["small"]["batch_size"] < 4096

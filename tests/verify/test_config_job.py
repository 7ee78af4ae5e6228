"""VerifyConfig validates itself and is built from plain data in one place;
the process job records refuse what they do not know."""

from __future__ import annotations

import pytest


from kernelmill.verify.config import ConfigError, VerifyConfig
from kernelmill.verify.process.job import CandidateJob, JobError, RunJob
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

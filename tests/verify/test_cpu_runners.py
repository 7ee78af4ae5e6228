"""Several run workers on a CPU device: candidates run side by side and get the
verdicts one worker gives (the pull loop is the one the GPU workers use)."""

from __future__ import annotations

import pytest
import typer

from kernelmill.tasks import load_tasks
from kernelmill.tasks.builtin import builtin_samples
from kernelmill.verify import VerifyConfig, verify_samples
from kernelmill.cli.runs import config_from_options

IDS = ["builtin/level1/01_ReLU/torch__ok", "builtin/level1/06_Sum/torch__incorrect",
       "builtin/level1/01_ReLU/torch__runtime_error", "builtin/level1/24_Softmax/torch__ok"]


def test_two_cpu_run_workers_share_the_work(tmp_path):
    tasks = load_tasks("builtin").by_id()
    samples = [s for s in builtin_samples() if s.sample_id in IDS]
    config = VerifyConfig(device="cpu", trials=1, time=False, cache_dir=str(tmp_path / "cache"), cpu_runners=2)
    stats: dict = {}
    verdicts = verify_samples(tasks, samples, config, store=None, stats=stats)
    assert [v.status for v in verdicts] == [s.meta["expect"] for s in samples]
    assert stats["runs"] == len(samples) and stats["run_workers"] == 2
    assert stats["gpu_busy_share"] is None and 0 < stats["run_busy_share"] <= 1.0 + 1e-6
    for v in verdicts:  # torch candidates: nothing to build, one run each (measurement.timeline)
        if v.status != "ok":
            continue
        tl = v.measurement["timeline"]
        assert "build" not in tl and len(tl["run"]) == 1 and 0 <= tl["run"][0][0] < tl["run"][0][1], tl


def test_cpu_runners_option_is_checked(capsys):
    with pytest.raises(typer.Exit):
        config_from_options("cpu", 1, 60.0, 60.0, 0, cpu_runners=0)
    assert config_from_options("cpu", 1, 60.0, 60.0, 0, cpu_runners=3).cpu_runners == 3
    assert "share the cores" in capsys.readouterr().err

"""Which GPUs run candidates (VerifyConfig.gpus, `--gpus`), and each run
worker's busy share: the pieces behind a one-GPU vs two-GPU scaling run and
behind a GRPO trainer that keeps its verifier off the policy's GPU. No GPU is
needed: the device probe is replaced by two described GPUs."""

from __future__ import annotations

import time

import pytest

from kernelmill.verify import VerifyConfig
from kernelmill.verify import runner as runner_mod
from kernelmill.verify.config import ConfigError
from kernelmill.verify.executors import local as local_executor
from kernelmill.verify.progress import StatusProgress
from kernelmill.verify.runner import HarnessError, Verifier

from verify.test_runs_per_gpu import Accounting, FakeVerifier, _jobs

TWO = ({"index": 0, "name": "GPU A", "capability": "9.0", "memory_gb": 80.0},
       {"index": 1, "name": "GPU B", "capability": "8.0", "memory_gb": 80.0})


@pytest.mark.parametrize("bad", [[], [0, 0], [-1], ["1"], [True], "1", 1])
def test_bad_gpu_lists_are_refused_with_the_setting_named(bad):
    with pytest.raises(ConfigError, match="gpus"):
        VerifyConfig(gpus=bad)


def test_from_dict_takes_a_list_as_yaml_gives_it():
    assert VerifyConfig.from_dict({"gpus": [1]}, "reward.verify").gpus == [1]
    with pytest.raises(ConfigError, match="reward.verify: gpus"):
        VerifyConfig.from_dict({"gpus": [1, 1]}, "reward.verify")


def test_selected_gpus_all_by_default_and_an_invisible_gpu_named():
    assert VerifyConfig().selected_gpus([0, 1]) == [0, 1]
    assert VerifyConfig(gpus=[1]).selected_gpus([0, 1]) == [1]
    with pytest.raises(ConfigError, match=r"GPU 2 is not visible \(visible: 0, 1"):
        VerifyConfig(gpus=[0, 2]).selected_gpus([0, 1])


@pytest.fixture
def two_gpus(monkeypatch, tmp_path):
    monkeypatch.setattr(runner_mod, "cuda_devices", lambda: TWO)
    monkeypatch.setattr(runner_mod, "device_name", lambda device: "GPU A")
    return dict(device="cuda", cache_dir=str(tmp_path / "cache"), standby=0)


def test_verifier_uses_only_the_gpus_asked_for(two_gpus, monkeypatch):
    v = Verifier(VerifyConfig(gpus=[1], **two_gpus), None)
    assert v.gpus == [1]
    assert v.cuda_arch == "8.0"  # built for the GPU that runs, not for the one left alone
    # the index is the process's own: under CUDA_VISIBLE_DEVICES=3,5 GPU 1 is physical 5
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5")
    assert v.gpu_env(1)["CUDA_VISIBLE_DEVICES"] == "5"
    assert Verifier(VerifyConfig(**two_gpus), None).gpus == [0, 1]


def test_verifier_refuses_a_gpu_that_is_not_there(two_gpus):
    with pytest.raises(HarnessError, match="GPU 3 is not visible"):
        Verifier(VerifyConfig(gpus=[3], **two_gpus), None)


def test_run_workers_start_on_the_selected_gpus_only():
    v = FakeVerifier([1], runs_per_gpu=1)  # what Verifier.gpus is after gpus=[1]
    local_executor.LocalExecutor().execute(v, _jobs(5), lambda job, verdict: None, Accounting())
    assert set(v.ran_on.values()) == {1}


def test_busy_share_by_worker_splits_the_run_busy_share():
    p = StatusProgress(total=3, enabled=False, gpus=2)
    t = time.monotonic()
    p.note_run(0, t, t + 10.0)
    p.note_run(1, t + 5.0, t + 10.0)
    p.note_run(0, t + 10.0, t + 20.0)
    st = p.stats()
    assert st["busy_share_by_worker"] == {"0": 1.0, "1": 0.25}
    assert st["gpu_busy_share"] == pytest.approx(25.0 / 40.0)


def test_cli_parses_gpus(capsys):
    import typer

    from kernelmill.cli.runs import parse_gpus

    assert parse_gpus(None) is None and parse_gpus("all") is None
    assert parse_gpus("0,1") == [0, 1] and parse_gpus(" 1 ") == [1]
    with pytest.raises(typer.Exit):
        parse_gpus("first")


def test_two_runs_sharing_a_gpu_count_its_busy_time_once():
    # runs_per_gpu 2: overlapping runs on GPU 0 keep it busy 0-12 s, not 20 s of 10
    from kernelmill.verify.progress import StatusProgress

    p = StatusProgress(3, enabled=False, gpus=1)
    p.note_run(0, 0.0, 10.0)
    p.note_run(0, 2.0, 12.0)
    p.note_run(0, 16.0, 20.0)  # idle 12-16 s
    st = p.stats()
    assert st["gpu_busy_share"] == pytest.approx(16.0 / 20.0)
    assert st["busy_share_by_worker"] == {"0": 0.8} and st["run_busy_s"] == pytest.approx(24.0)

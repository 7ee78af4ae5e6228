"""The Ray executor gives the local executor's verdicts and store semantics (local Ray, CPU)."""

from __future__ import annotations

import pytest

from kernelmill.tasks import load_tasks
from kernelmill.tasks.builtin import builtin_samples
from kernelmill.verify import ResultStore, VerifyConfig, verify_samples
from kernelmill.verify.executors import make_executor

ray = pytest.importorskip("ray")

IDS = ["builtin/level1/01_ReLU/torch__ok", "builtin/level1/06_Sum/torch__incorrect"]


@pytest.fixture(scope="session")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    yield
    ray.shutdown()


def test_ray_and_local_agree(local_ray, tmp_path):
    tasks = load_tasks("builtin").by_id()
    samples = [s for s in builtin_samples() if s.sample_id in IDS]
    config = VerifyConfig(device="cpu", trials=1, cache_dir=str(tmp_path / "cache"))
    stats: dict = {}
    via_ray = verify_samples(tasks, samples, config, store=tmp_path / "ray.sqlite", executor="ray", stats=stats)
    # the local executor's verdicts for these are checked in test_builtin_candidates
    assert [v.status for v in via_ray] == [s.meta["expect"] for s in samples]
    assert stats["done"] == len(samples) and stats["runs"] == len(samples)  # torch: no build phase
    # same store semantics: one row per key, a re-run is all cache hits and runs nothing
    assert len(ResultStore(tmp_path / "ray.sqlite")) == len(samples)
    again = verify_samples(tasks, samples, config, store=tmp_path / "ray.sqlite", executor="ray")
    assert all(v.cached for v in again) and [v.status for v in again] == [v.status for v in via_ray]


def test_unknown_executor_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown executor 'slurm'"):
        make_executor("slurm")

"""Builds run at a lower CPU priority than runs (VerifyConfig.build_nice): a run's
host work is on the GPU's critical path, a compiler is not."""

from __future__ import annotations

import json
import os

import pytest

from kernelmill.records import Sample
from kernelmill.tasks import load_tasks
from kernelmill.verify import VerifyConfig, build_prepare, verify_samples
from kernelmill.verify.config import ConfigError

RECORDING = '''
import os
import torch

# every process that imports this candidate says which phase it is and its niceness
with open({path!r}, "a") as fh:
    fh.write(f"{{os.getpriority(os.PRIO_PROCESS, 0)}}\\n")


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)
'''


def _imports(path) -> list[int]:
    return [int(x) for x in path.read_text().split()]


@pytest.mark.parametrize("nice", [7, 0])
def test_the_build_process_runs_nicer_than_the_run(tmp_path, nice):
    record = tmp_path / "niceness.txt"
    tasks = load_tasks("builtin").by_id()
    sample = Sample(sample_id="nice", task_id="level1/01_ReLU", language="cpp",
                    code=RECORDING.format(path=str(record)))
    config = VerifyConfig(device="cpu", trials=1, time=False, guards="off", fallback="allow",
                          cache_dir=str(tmp_path / "cache"), build_nice=nice)
    verdict, = verify_samples(tasks, [sample], config, store=None)
    base = os.getpriority(os.PRIO_PROCESS, 0)
    seen = _imports(record)
    # the build phase imports the candidate first, then the run phase does
    assert len(seen) >= 2, (verdict.status, verdict.message, seen)
    assert seen[0] == min(19, base + nice)
    assert seen[-1] == base, "the run phase must keep this process's priority"


def test_build_nice_is_checked():
    assert VerifyConfig(build_nice=0).build_nice == 0
    for bad in (-1, 20):
        with pytest.raises(ConfigError, match="build_nice"):
            VerifyConfig(build_nice=bad)


def test_the_header_build_in_the_background_is_started_nicer(tmp_path, monkeypatch):
    asked: list[int] = []
    monkeypatch.setattr(os, "nice", lambda inc: asked.append(inc) or 0)
    build_prepare.main([str(tmp_path), "--specs", json.dumps([]), "--nice", "9"])
    assert asked == [9]
    with pytest.raises(SystemExit, match="--nice"):
        build_prepare.main([str(tmp_path), "--specs", "[]", "--nice", "high"])

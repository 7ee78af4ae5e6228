"""Builds run at a lower CPU priority than runs (VerifyConfig.build_nice): a run's
host work is on the GPU's critical path, a compiler is not."""

from __future__ import annotations

import json
import os

import pytest

from kernelmill.records import Sample
from kernelmill.tasks import load_tasks
from kernelmill.verify import VerifyConfig, verify_samples
from kernelmill.verify.build import build_prepare
from kernelmill.verify.config import ConfigError

RECORDING = '''
import os
import torch

# every process that imports this candidate says which phase it is and its niceness
with open({path!r}, "a") as fh:
    fh.write(f"{{os.getpriority(os.PRIO_PROCESS, 0)}} {{os.environ.get('TORCH_EXTENSIONS_DIR')}}\\n")


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)
'''


def _imports(path) -> list[tuple[int, str]]:
    return [(int(line.split()[0]), line.split()[1]) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("nice,build_standby", [(7, 0), (0, 0), (7, 1)])
def test_the_build_process_runs_nicer_than_the_run(tmp_path, nice, build_standby):
    """A fresh build process and a build spare (started ahead, VerifyConfig.build_standby)
    alike: the increment once, never twice."""
    record = tmp_path / "niceness.txt"
    tasks = load_tasks("builtin").by_id()
    sample = Sample(sample_id="nice", task_id="level1/01_ReLU", language="cpp",
                    code=RECORDING.format(path=str(record)))
    config = VerifyConfig(device="cpu", trials=1, time=False, guards="off", fallback="allow",
                          cache_dir=str(tmp_path / "cache"), build_nice=nice, build_standby=build_standby)
    verdict, = verify_samples(tasks, [sample], config, store=None)
    assert ("build_spare_warm_s" in verdict.phases) == bool(build_standby), verdict.phases
    base = os.getpriority(os.PRIO_PROCESS, 0)
    seen = _imports(record)
    # the build phase imports the candidate first, then the run phase does
    assert len(seen) >= 2, (verdict.status, verdict.message, seen)
    assert seen[0][0] == min(19, base + nice)
    assert seen[-1][0] == base, "the run phase must keep this process's priority"
    # a spare took the job's environment: the candidate's extension folder, as a fresh process has it
    assert seen[0][1] == seen[-1][1] and "/ext/" in seen[0][1]


def test_build_nice_is_checked():
    assert VerifyConfig(build_nice=0).build_nice == 0
    for bad in (-1, 20):
        with pytest.raises(ConfigError, match="build_nice"):
            VerifyConfig(build_nice=bad)
    with pytest.raises(ConfigError, match="build_standby"):
        VerifyConfig(build_standby=-2)


def test_the_header_build_in_the_background_is_started_nicer(tmp_path, monkeypatch):
    asked: list[int] = []
    monkeypatch.setattr(os, "nice", lambda inc: asked.append(inc) or 0)
    build_prepare.main([str(tmp_path), "--specs", json.dumps([]), "--nice", "9"])
    assert asked == [9]
    with pytest.raises(SystemExit, match="--nice"):
        build_prepare.main([str(tmp_path), "--specs", "[]", "--nice", "high"])


def test_the_cli_options_reach_the_config(capsys):
    import typer

    from kernelmill.cli.runs import config_from_options

    config = config_from_options("cpu", 1, 60.0, 60.0, 0, build_nice=3, build_standby=2)
    assert (config.build_nice, config.build_standby) == (3, 2)
    with pytest.raises(typer.Exit):
        config_from_options("cpu", 1, 60.0, 60.0, 0, build_standby=-5)
    assert "build_standby" in capsys.readouterr().err

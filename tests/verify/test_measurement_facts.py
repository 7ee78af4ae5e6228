"""What a verdict's measurement says about the machine (verify/measure/environment.py):
fixed GPU facts read once per process, the GPU's clocks read for each
measurement from a query started before it is needed. nvidia-smi is stood in
for by a script that logs each call, so this runs on a CPU machine."""

from __future__ import annotations

import os
import stat

import pytest
import torch

from kernelmill.verify.measure import environment

FAKE_SMI = """#!/bin/sh
echo "$@" >> "{log}"
case "$*" in
  *driver_version*) echo "580.1, 1980, 700.00" ;;
  *clocks.sm*) echo "1755, 2619, 41" ;;
esac
"""


@pytest.fixture
def fake_smi(tmp_path, monkeypatch):
    log = tmp_path / "calls.txt"
    exe = tmp_path / "bin" / "nvidia-smi"
    exe.parent.mkdir()
    exe.write_text(FAKE_SMI.format(log=log))
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{exe.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5")
    return log


def test_the_clock_query_runs_apart_and_is_collected_later(fake_smi):
    query = environment.gpu_state_query(torch.device("cuda:1"))
    assert query is not None
    state = environment._gpu_state(query)
    assert state == {"sm_clock_mhz": "1755", "mem_clock_mhz": "2619", "temperature_c": "41"}
    call, = fake_smi.read_text().splitlines()
    assert call.startswith("-i 5 ") and "clocks.sm" in call and "driver_version" not in call


def test_fixed_facts_are_read_once_per_process(fake_smi, monkeypatch):
    class Props:
        name, major, minor, total_memory, multi_processor_count = "H-test", 9, 0, 80 * 2**30, 132

    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda index: Props)
    environment._gpu.cache_clear()
    try:
        environment.warm_facts(torch.device("cuda:0"))  # a spare's warm-up
        first = fake_smi.read_text().splitlines()
        info = environment.describe(torch.device("cuda:0"), environment.gpu_state_query(torch.device("cuda:0")))
        info2 = environment.describe(torch.device("cuda:0"))  # no query given: read now
    finally:
        environment._gpu.cache_clear()
    calls = fake_smi.read_text().splitlines()
    assert len(first) == 1 and "driver_version" in first[0] and first[0].startswith("-i 3 ")
    assert sum("driver_version" in c for c in calls) == 1  # cached: never again in this process
    assert sum("clocks.sm" in c for c in calls) == 2  # the state: once per measurement
    for i in (info, info2):
        assert i["gpu"] == "H-test" and i["driver"] == "580.1" and i["max_sm_clock_mhz"] == "1980"
        assert i["sm_clock_mhz"] == "1755" and i["temperature_c"] == "41" and i["triton"] == info["triton"]


def test_no_nvidia_smi_means_no_query(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert environment.gpu_state_query(torch.device("cuda:0")) is None
    assert environment._gpu_state(None) == {}
    assert environment.gpu_state_query(torch.device("cpu")) is None

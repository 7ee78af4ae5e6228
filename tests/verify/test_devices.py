"""The GPU probe (verify/devices.py): torch's CUDA build read from its version file
decides whether to probe at all; the driver library answers without importing torch,
and torch answers where the driver cannot. On the GPU machine both must agree."""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import pytest

from kernelmill.verify import devices

VERSION_CPU = "__version__ = '2.13.0+cpu'\ndebug = False\ncuda: Optional[str] = None\nhip: Optional[str] = None\n"
VERSION_CUDA = "__version__ = '2.11.0+cu130'\ncuda: Optional[str] = '13.0'\nhip: Optional[str] = None\n"
VERSION_ROCM = "__version__ = '2.11.0+rocm7'\ncuda: Optional[str] = None\nhip: Optional[str] = '7.0.1'\n"


def _fake_torch(monkeypatch, tmp_path, text: str):
    (tmp_path / "torch").mkdir(exist_ok=True)
    (tmp_path / "torch" / "version.py").write_text(text)
    spec = SimpleNamespace(submodule_search_locations=[str(tmp_path / "torch")])
    monkeypatch.setattr("importlib.util.find_spec", lambda name: spec if name == "torch" else None)


@pytest.mark.parametrize("text,want", [(VERSION_CPU, (None, False)), (VERSION_CUDA, ("13.0", False)),
                                       (VERSION_ROCM, (None, True)), ("x = 1\n", None)])
def test_torch_build_is_read_from_its_version_file(monkeypatch, tmp_path, text, want):
    _fake_torch(monkeypatch, tmp_path, text)
    assert devices._torch_build() == want


def _probes(monkeypatch, answers: dict):
    seen = []

    def run(argv):
        kind = "driver" if argv[2] == devices._DRIVER_PROBE else "torch"
        seen.append(kind)
        return answers[kind]

    monkeypatch.setattr(devices, "_run_probe", run)
    devices.cuda_devices.cache_clear()
    return seen


GPU = ({"index": 0, "name": "NVIDIA H100 80GB HBM3", "capability": "9.0", "memory_gb": 79.2},)


def test_which_probe_answers(monkeypatch, tmp_path):
    try:
        _fake_torch(monkeypatch, tmp_path, VERSION_CPU)  # a CPU build of torch sees no GPU: nothing is started
        seen = _probes(monkeypatch, {})
        assert devices.cuda_devices() == () and seen == []
        _fake_torch(monkeypatch, tmp_path, VERSION_CUDA)  # the driver answers
        seen = _probes(monkeypatch, {"driver": (0, GPU)})
        assert devices.cuda_devices() == GPU and seen == ["driver"]
        seen = _probes(monkeypatch, {"driver": (3, ()), "torch": (0, GPU)})  # it cannot: torch does
        assert devices.cuda_devices() == GPU and seen == ["driver", "torch"]
        _fake_torch(monkeypatch, tmp_path, VERSION_ROCM)  # not CUDA's driver: torch
        seen = _probes(monkeypatch, {"torch": (0, GPU)})
        assert devices.cuda_devices() == GPU and seen == ["torch"]
    finally:
        devices.cuda_devices.cache_clear()


def test_the_driver_probe_steps_aside_without_a_driver():
    # this CPU machine has no libcuda.so.1 (where it has one, a driver older than the
    # CUDA torch was built with is the same answer)
    res = subprocess.run([sys.executable, "-c", devices._DRIVER_PROBE, "999"], capture_output=True, text=True)
    assert res.returncode == 3, res.stderr


@pytest.mark.gpu
def test_the_driver_and_torch_see_the_same_gpus():
    devices.cuda_devices.cache_clear()
    fast = devices.cuda_devices()
    assert fast and fast == devices.torch_cuda_devices()
    res = subprocess.run([sys.executable, "-c", devices._DRIVER_PROBE, "1"], capture_output=True, text=True)
    assert res.returncode == 0  # the driver answered (not torch behind it)

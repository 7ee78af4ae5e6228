"""The zygotes of a GPU `kernelmill verify`, started by the entry point before the
command's imports (verify/early.py), and adopted by the verifier whose settings match."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import Future
from types import SimpleNamespace

import pytest

from kernelmill.verify import early


class FakeZygote:
    def __init__(self, folder):
        self.folder = folder
        self.closed = False

    def close(self):
        self.closed = True


@pytest.fixture()
def recorded(monkeypatch, tmp_path):
    """start_zygote recorded (a finished future of a fake zygote), a GPU listed, the cache in tmp_path."""
    started = []

    def fake_start(mode, work, env, folder=None):
        f = Future()
        f.set_result(FakeZygote(tmp_path / mode))
        started.append((mode, env.get("CUDA_VISIBLE_DEVICES"), f))
        return f

    monkeypatch.setattr(early, "start_zygote", fake_start)
    monkeypatch.setattr(early, "driver_lists_gpus", lambda: True)
    monkeypatch.setenv("KERNELMILL_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setattr(early, "_started", {})
    return started


@pytest.mark.parametrize("argv,modes", [
    (["verify", "tasks", "s.jsonl", "--out", "v.jsonl"], ["run", "build"]),
    (["verify", "tasks", "s.jsonl", "--device", "cuda", "--gpus", "1"], ["run", "build"]),
    (["verify", "tasks", "s.jsonl", "--standby", "0"], ["build"]),
    (["verify", "tasks", "s.jsonl", "--build-standby=0"], ["run"]),
    (["verify", "tasks", "s.jsonl", "--device", "cpu"], []),
    (["verify", "tasks", "s.jsonl", "--no-fork-workers"], []),
    (["verify", "--help"], []),
    (["curate", "x"], []),
    ([], []),
])
def test_what_the_entry_point_starts(recorded, argv, modes):
    early.start_from_argv(argv)
    assert [m for m, _, _ in recorded] == modes
    if "--gpus" in argv:
        assert recorded[0][1] == "1"  # the run zygote on the first GPU the run uses
    if "build" in modes:
        assert [env for m, env, _ in recorded if m == "build"] == [""]  # builds never see a GPU


def test_nothing_starts_where_the_driver_lists_no_gpu(recorded, monkeypatch):
    monkeypatch.setattr(early, "driver_lists_gpus", lambda: False)
    early.start_from_argv(["verify", "tasks", "s.jsonl"])
    assert recorded == []


def test_the_verifier_adopts_what_matches_and_closes_the_rest(recorded, monkeypatch, tmp_path):
    from kernelmill.verify import runner
    from kernelmill.verify.config import VerifyConfig

    early.start_from_argv(["verify", "tasks", "s.jsonl"])
    futures = {m: f for m, _, f in recorded}
    fake = ({"index": 0, "name": "Fake GPU", "capability": "9.0", "memory_gb": 80.0},)
    monkeypatch.setattr(runner, "cuda_devices", lambda: fake)
    monkeypatch.setattr(runner, "device_name", lambda device: "Fake GPU")
    monkeypatch.setattr(runner, "start_zygote", lambda *a: pytest.fail("started a second zygote"))
    cfg = VerifyConfig(device="cuda", cache_dir=str(tmp_path / "cache"), fork_workers=True)
    verifier = runner.Verifier(cfg, None)
    assert verifier.standby._zygote_future is futures["run"]
    assert verifier.build_standby._zygote_future is futures["build"]
    verifier.close()
    assert futures["run"].result().closed and futures["build"].result().closed
    # settings the guess did not match (no spares, no build spares): both closed, none adopted
    recorded.clear()
    early.start_from_argv(["verify", "tasks", "s.jsonl"])
    runner.Verifier(VerifyConfig(device="cuda", cache_dir=str(tmp_path / "cache"), fork_workers=True,
                                 standby=0, build_standby=0), None).close()
    assert all(f.result().closed for _, _, f in recorded) and early._started == {}


def test_the_entry_point_imports_no_torch_before_it_starts_them():
    code = ("import sys; from kernelmill.verify import early; import kernelmill.entry; "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


@pytest.mark.parametrize("wait", [True, False], ids=["started", "still-starting"])
def test_a_command_that_ends_before_its_verifier_leaves_no_zygote_folder(tmp_path, wait):
    """A real build zygote (no GPU needed), started as the entry point starts it, and the
    command over before any verifier adopted it: its process and its folder go."""
    code = (f"import os; from pathlib import Path; from kernelmill.verify import early; "
            f"early.start(Path({str(tmp_path / 'work')!r}), ('build',)); "
            f"f = next(iter(early._started.values()))[0]; "
            f"z = f.result(timeout=240) if {wait} else None; "
            f"print(z.proc.pid if z else -1)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    left = list((tmp_path / "work").glob("zygote-*"))
    assert left == [], left
    pid = int(res.stdout.split()[-1])
    if pid > 0:
        import os
        import time

        for _ in range(50):  # killed and reaped by the exit hook; at most a zombie's moment
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        else:
            pytest.fail(f"the zygote {pid} outlived the command")

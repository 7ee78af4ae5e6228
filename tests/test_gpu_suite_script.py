"""`.ci/gpu_suite`, the `-m gpu` suite's work queue, on a machine without a GPU (its tests skip
here): the queue it builds, longest first; an item that does not fit the time left stays
pending for the next run; QUEUE_FRONT goes first in place of the same plain file; a run that
has nothing left to do starts the whole suite again."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / ".ci" / "gpu_suite"

pytestmark = pytest.mark.skipif(not shutil.which("flock"), reason="the queue's lock needs flock (util-linux)")


def _run(tmp_path: Path, **env) -> tuple[subprocess.CompletedProcess, list[str]]:
    full = {**os.environ, "KM_GPU_QUEUE_DIR": str(tmp_path / "q"), "LOGS": str(tmp_path / "logs"), "GPUS": "1",
            "TAG": "t", **env}
    proc = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=full, timeout=300)
    pending = (tmp_path / "q" / "pending").read_text().splitlines()
    return proc, pending


def test_the_default_queue_holds_every_gpu_file_longest_first(tmp_path):
    proc, pending = _run(tmp_path, CALL_S="16")  # 1 s left after the margin: nothing starts
    assert proc.returncode == 0, proc.stderr
    files = {line.split("|")[2] for line in pending}
    marked = {str(p.relative_to(ROOT)) for p in (ROOT / "tests").rglob("test_*.py") if "mark.gpu" in p.read_text()}
    assert files == marked
    assert sum("KM_GPU_PART=builtin:" in line for line in pending) == 8
    est = [int(line.split("|")[0]) for line in pending]
    assert est == sorted(est, reverse=True)


def test_what_does_not_fit_stays_for_the_next_run(tmp_path):
    queue = "900||tests/verify/test_timing_gpu.py;20||tests/verify/test_devices.py"
    proc, pending = _run(tmp_path, CALL_S="120", QUEUE=queue)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert pending == ["900||tests/verify/test_timing_gpu.py"]  # 900 s never fit 120
    ran = (tmp_path / "logs" / "run_t.txt").read_text()
    assert "tests/verify/test_devices.py rc 0" in ran  # its GPU test skipped here: exit 0
    # the next run goes on from what is pending, the front item first
    proc, pending = _run(tmp_path, CALL_S="16", QUEUE_FRONT="30|X=1|tests/verify/test_devices.py")
    assert pending == ["30|X=1|tests/verify/test_devices.py", "900||tests/verify/test_timing_gpu.py"]


def test_a_front_item_replaces_the_plain_one_of_its_file(tmp_path):
    queue = "20||tests/verify/test_devices.py;900||tests/verify/test_timing_gpu.py"
    proc, pending = _run(tmp_path, CALL_S="16", QUEUE=queue, QUEUE_FRONT="30|PYX=/x|tests/verify/test_devices.py")
    assert pending == ["30|PYX=/x|tests/verify/test_devices.py", "900||tests/verify/test_timing_gpu.py"]


def test_a_failing_item_fails_the_run(tmp_path):
    test = tmp_path / "test_fails_on_gpu.py"
    test.write_text("import pytest\n\n@pytest.mark.gpu\ndef test_x():\n    assert False\n")
    proc, pending = _run(tmp_path, CALL_S="120", QUEUE=f"20||{test}")
    assert proc.returncode != 0 and pending == [], proc.stdout


def test_wheels_are_installed_and_put_on_the_tests_path(tmp_path):
    """WHEELS: the GPU machine lacks optional extras (tree-sitter for the PTX evaluator's test)."""
    import zipfile

    wheels = tmp_path / "wh"
    wheels.mkdir()
    with zipfile.ZipFile(wheels / "kmprobe-1.0-py3-none-any.whl", "w") as z:
        z.writestr("kmprobe/__init__.py", "VALUE = 7\n")
        z.writestr("kmprobe-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: kmprobe\nVersion: 1.0\n")
        z.writestr("kmprobe-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr("kmprobe-1.0.dist-info/RECORD", "")
    test = tmp_path / "test_needs_probe.py"
    # imported at collection, so a missing wheel fails the item here too, where its GPU test skips
    test.write_text("import kmprobe\nimport pytest\n\n\n@pytest.mark.gpu\ndef test_x():\n    assert kmprobe.VALUE == 7\n")
    proc, _ = _run(tmp_path, CALL_S="120", QUEUE=f"20||{test}")
    assert proc.returncode != 0  # without WHEELS: kmprobe is not there
    proc, _ = _run(tmp_path, CALL_S="120", QUEUE=f"20||{test}", WHEELS=str(wheels))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{test} rc 0" in (tmp_path / "logs" / "run_t.txt").read_text()
    proc, _ = _run(tmp_path, CALL_S="120", QUEUE=f"20||{test}", WHEELS=str(tmp_path / "none"))
    assert proc.returncode == 2 and "WHEELS" in proc.stderr

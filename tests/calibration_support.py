"""The calibration suite (benchmarks/calibration/) for the GPU tests that check a strict verdict on one of its kernels."""

from __future__ import annotations


def calibration_kernels(*kernel_ids: str):
    """The calibration suite's kernels of these ids (benchmarks/calibration/suite.py) and its
    run module (run.py, whose `kernelmill_checks` verifies them as the suite does), for the GPU
    tests that check a strict verdict on a kernel of the suite."""
    import importlib.util
    import sys
    from pathlib import Path

    cal = Path(__file__).resolve().parents[1] / "benchmarks" / "calibration"
    if str(cal) not in sys.path:
        sys.path.insert(0, str(cal))
    import suite

    spec = importlib.util.spec_from_file_location("calibration_run", cal / "run.py")
    run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run)
    picked = [k for k in suite.all_kernels() if k.kernel_id in kernel_ids]
    assert len(picked) == len(kernel_ids), f"not in the calibration suite: {set(kernel_ids) - {k.kernel_id for k in picked}}"
    return picked, run

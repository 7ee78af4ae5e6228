"""Verification: build, run, check and time candidates in isolated processes.

    from kernelmill.verify import VerifyConfig, verify_samples
    verdicts = verify_samples(tasks, samples, VerifyConfig(device="cpu"), store="results.sqlite")

The names below are imported on first use (PEP 562): importing a submodule that needs
no torch (the process machinery, `early`) must not import torch through this package.
"""

from __future__ import annotations

from ..lazy import lazy_face

_WHERE = {
    "VerifyConfig": "config", "default_cache_dir": "paths", "HarnessError": "runner", "verify_samples": "runner",
    "ResultStore": "store", "StoreError": "store", "result_key": "store", "input_key": "store",
    "CheckRule": "measure.correctness", "Comparison": "measure.correctness", "compare": "measure.correctness",
    "Timing": "measure.timing", "TimingConfig": "measure.timing", "time_interleaved": "measure.timing",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)

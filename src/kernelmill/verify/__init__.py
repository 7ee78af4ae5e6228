"""Verification: build, run, check and time candidates in isolated processes.

    from kernelmill.verify import VerifyConfig, verify_samples
    verdicts = verify_samples(tasks, samples, VerifyConfig(device="cpu"), store="results.sqlite")
"""

from .config import VerifyConfig, default_cache_dir
from .correctness import CheckRule, Comparison, compare
from .runner import HarnessError, verify_samples
from .store import ResultStore, StoreError, result_key
from .timing import Timing, TimingConfig, time_interleaved

__all__ = [
    "CheckRule", "Comparison", "HarnessError", "ResultStore", "StoreError", "Timing", "TimingConfig",
    "VerifyConfig", "compare", "default_cache_dir", "result_key", "time_interleaved", "verify_samples",
]

"""Verification: build, run, check and time candidates in isolated processes.

    from kernelmill.verify import VerifyConfig, verify_samples
    verdicts = verify_samples(tasks, samples, VerifyConfig(device="cpu"), store="results.sqlite")

The names below are imported on first use (PEP 562): importing a submodule that needs
no torch (the process machinery, `early`) must not import torch through this package.
This table is the package's face: code outside verify/ imports only these names
(tests/test_verify_layout.py holds it to that).
"""

from __future__ import annotations

from ..lazy import lazy_face

_WHERE = {
    "build_prepare": "build.build_prepare",
    "VerifyClient": "client", "ServiceError": "client",
    "ConfigError": "config", "FIELD_HELP": "config", "VerifyConfig": "config",
    "cuda_devices": "devices", "driver_lists_gpus": "devices",
    "start_from_argv": "early",
    "make_executor": "executors",
    "FLAGS": "guards.flags", "FALLBACK_FLAGS": "guards.flags", "decide": "guards.flags",
    "Bench": "measure.timing", "CheckRule": "measure.correctness", "Comparison": "measure.correctness",
    "DEFAULT_TOLERANCES": "measure.correctness", "NA": "measure.trivial",
    "TIMING_LOCK_TIMEOUT_S": "measure.gpulock", "Timing": "measure.timing", "TimingConfig": "measure.timing",
    "TrivialCheck": "measure.trivial", "WEAK_BY": "measure.trivial", "compare": "measure.correctness",
    "compare_speed": "measure.timing:compare", "finite_mean_std": "measure.trivial",
    "flatten_outputs": "measure.correctness", "gpu_lock": "measure.gpulock",
    "set_cpu_threads": "measure.timing", "time_interleaved": "measure.timing", "work_copy": "measure.trivial",
    "default_cache_dir": "paths",
    "die_with_parent": "process.loading",
    "HarnessError": "runner", "Verifier": "runner", "sized_tasks": "runner", "verify_samples": "session",
    "Sandbox": "sandbox", "apply_rlimits": "sandbox", "python_argv": "sandbox", "scrubbed_env": "sandbox",
    "ServiceConfig": "service", "VerifyService": "service", "make_server": "service",
    "VerifySession": "session",
    "ResultStore": "store", "StoreError": "store", "input_key": "store", "result_key": "store",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)

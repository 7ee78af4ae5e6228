"""kernelmill: generate, verify, curate and train on LLM-written GPU kernels.

The names below are imported on first use (PEP 562, kernelmill/lazy.py): a command that
needs no records or tasks (`kernelmill ptx stats`) does not pay for them at its start."""

from __future__ import annotations

from .lazy import lazy_face

_WHERE = {
    "HARNESS_VERSION": "records", "__version__": "records:HARNESS_VERSION",
    "Pair": "records", "Sample": "records", "Task": "records", "Verdict": "records",
    "append_jsonl": "records", "read_jsonl": "records", "write_jsonl": "records",
    "TaskSet": "tasks", "load_tasks": "tasks",
}

__all__ = sorted(n for n in _WHERE if n != "__version__")
__getattr__, __dir__ = lazy_face(__name__, _WHERE)

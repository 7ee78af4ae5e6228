"""kernelmill: generate, verify, curate and train on LLM-written GPU kernels."""

from .records import (HARNESS_VERSION, Pair, Sample, Task, Verdict, append_jsonl, read_jsonl,
                      write_jsonl)
from .tasks import TaskSet, load_tasks

__version__ = HARNESS_VERSION

__all__ = [
    "HARNESS_VERSION", "Pair", "Sample", "Task", "TaskSet", "Verdict",
    "append_jsonl", "load_tasks", "read_jsonl", "write_jsonl",
]

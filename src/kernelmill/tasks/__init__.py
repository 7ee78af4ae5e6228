"""Task sources (KernelBench folders, tables, the builtin suite)."""

from .sources import BUILTIN_DIR, TaskSet, TaskSourceError, check_task_code, load_tasks, parse_task_path

__all__ = ["BUILTIN_DIR", "TaskSet", "TaskSourceError", "check_task_code", "load_tasks", "parse_task_path"]

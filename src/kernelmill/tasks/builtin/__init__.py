"""The builtin task suite and its example candidates.

``tasks/levelN/NN_Name.py`` are KernelBench-format reference programs (load
them with ``kernelmill.tasks.load_tasks("builtin")``); ``candidates/`` holds
hand-written ``ModelNew`` files with known verdicts for a subset of them.
"""

from .examples import BUILTIN_CANDIDATES_DIR, CandidateName, builtin_samples, parse_candidate_path

BUILTIN_TASKS_DIR = BUILTIN_CANDIDATES_DIR.parent / "tasks"

__all__ = ["BUILTIN_CANDIDATES_DIR", "BUILTIN_TASKS_DIR", "CandidateName", "builtin_samples", "parse_candidate_path"]

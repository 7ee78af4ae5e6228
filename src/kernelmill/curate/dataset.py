"""Curated rows: what `kernelmill curate` writes and the later stages read.

A curated row is a Sample's fields plus the verdict facts and the curation
facts (docs/FORMATS.md, section "Curation"):
`status, correct, speedup, runtime_ms, ref_runtime_ms` from the verdict;
`recipe, source_part` (concur: a | b | c; an ablation: its name); `op_type`
and `op_type_origin` of the task; `task_code` when the tasks were given.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..records import ReadProblem, Task, iter_jsonl_numbered, write_jsonl
from .inputs import CurateInputError, generation_row
from .optype import TaskType
from .recipes import Selection


def curated_rows(sel: Selection, tasks: dict[str, Task] | None = None,
                 types: dict[str, TaskType] | None = None) -> list[dict[str, Any]]:
    rows = []
    for g, part in sel.chosen:
        row = generation_row(g)
        row["recipe"] = sel.recipe
        row["source_part"] = part
        tt = (types or {}).get(g.task_id)
        row["op_type"] = tt.op_type if tt else None
        row["op_type_origin"] = tt.origin if tt else "unknown"
        task = (tasks or {}).get(g.task_id)
        if task is not None:
            row["task_code"] = task.code
            row["task_name"] = task.name
        rows.append(row)
    return rows


def read_rows(path: str | os.PathLike, problems: list[ReadProblem] | None = None) -> list[dict[str, Any]]:
    """Any JSONL of records; raises CurateInputError when missing or empty."""
    if not Path(path).exists():
        raise CurateInputError(f"{path}: file not found")
    local: list[ReadProblem] = []
    rows = [obj for _, obj in iter_jsonl_numbered(path, local)]
    if problems is not None:
        problems.extend(local)
    if not rows:
        raise CurateInputError(f"{path}: no records (empty file or no readable line; {len(local)} unreadable)")
    return rows


def write_rows(path: str | os.PathLike, rows: list[dict[str, Any]]) -> int:
    return write_jsonl(path, rows)


def excluded_path(out: str | os.PathLike, explicit: str | os.PathLike | None = None) -> Path:
    if explicit:
        return Path(explicit)
    p = Path(out)
    stem = p.name[:-len(".jsonl")] if p.name.endswith(".jsonl") else p.name
    return p.with_name(stem + ".excluded.jsonl")

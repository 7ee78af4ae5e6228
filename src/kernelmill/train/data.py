"""Reading the training exports (docs/FORMATS.md) into `datasets.Dataset`s.

Each recipe reads one shape; a file in another shape stops the run with the
expected columns and the first offending line, instead of a KeyError deep in
TRL after the model has loaded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..records import ReadProblem, iter_jsonl_numbered

ROLES = ("system", "user", "assistant", "tool")

EXPECTED = {
    "sft": "messages (a list of {role, content} with at least one assistant turn), or prompt + completion strings",
    "kto": "prompt (messages), completion (one assistant message), label (true|false)",
    "grpo": "prompt (messages), task_id, language (and task_code, or a reward.tasks source)",
}
KEEP = {"sft": ("messages",), "kto": ("prompt", "completion", "label"),
        "grpo": ("prompt", "task_id", "language", "task_code")}


class DatasetFormatError(ValueError):
    """Rows that do not have the shape the recipe needs."""


def _rows(path: Path) -> list[tuple[int, dict[str, Any]]]:
    if not path.exists():
        raise DatasetFormatError(f"{path}: dataset file not found")
    if path.suffix in (".parquet", ".pq"):
        import pyarrow.parquet as pq

        return [(i + 2, row) for i, row in enumerate(pq.read_table(path).to_pylist())]  # row i is "line" i+2
    if path.suffix != ".jsonl":
        raise DatasetFormatError(f"{path}: expected a .jsonl or .parquet export")
    problems: list[ReadProblem] = []
    rows = list(iter_jsonl_numbered(path, problems))
    if problems:  # a training set with holes would train on less than the user thinks
        raise DatasetFormatError("; ".join(str(p) for p in problems[:3]))
    return rows


def _check_messages(msgs: Any, where: str, what: str) -> None:
    if not isinstance(msgs, list) or not msgs:
        raise DatasetFormatError(f"{where}: '{what}' must be a non-empty list of {{role, content}} messages")
    for m in msgs:
        if not isinstance(m, dict) or "role" not in m or "content" not in m:
            raise DatasetFormatError(f"{where}: every message in '{what}' needs 'role' and 'content', got {m!r:.80}")
        if m["role"] not in ROLES:
            raise DatasetFormatError(f"{where}: unknown role {m['role']!r} in '{what}' (expected one of {ROLES})")
        if not isinstance(m["content"], str):
            raise DatasetFormatError(f"{where}: message content in '{what}' must be a string")


def check_row(kind: str, row: dict[str, Any], where: str, need_task_code: bool = False) -> None:
    missing = [c for c in KEEP[kind] if c not in row and c != "task_code"]
    if need_task_code and "task_code" not in row:
        missing.append("task_code")
    if missing:
        raise DatasetFormatError(
            f"{where}: {kind.upper()} data needs columns {EXPECTED[kind]}; missing {', '.join(missing)} "
            f"(found: {', '.join(sorted(row)) or 'nothing'})")
    if kind == "sft":
        _check_messages(row["messages"], where, "messages")
        if not any(m["role"] == "assistant" for m in row["messages"]):
            raise DatasetFormatError(f"{where}: no assistant turn in 'messages': nothing to train on")
    elif kind == "kto":
        _check_messages(row["prompt"], where, "prompt")
        _check_messages(row["completion"], where, "completion")
        if not isinstance(row["label"], bool):
            raise DatasetFormatError(f"{where}: 'label' must be true or false, got {row['label']!r}")
    else:
        _check_messages(row["prompt"], where, "prompt")
        if row["prompt"][-1]["role"] != "user":
            raise DatasetFormatError(f"{where}: a GRPO prompt must end with a user turn")


def load_rows(kind: str, path: str | Path, max_samples: int | None = None,
              need_task_code: bool = False) -> list[dict[str, Any]]:
    """Checked rows of one export, reduced to the columns the recipe uses."""
    path = Path(path)
    rows = _rows(path)
    if not rows:
        raise DatasetFormatError(f"{path}: empty dataset")
    if max_samples is not None:
        rows = rows[:max_samples]
    out = []
    for line, row in rows:
        if kind == "sft" and "messages" not in row and isinstance(row.get("prompt"), str) \
                and isinstance(row.get("completion"), str):
            # plain prompt/completion tables (e.g. the Triton FIM CSV) as one user and one assistant turn
            row = {"messages": [{"role": "user", "content": row["prompt"]},
                                {"role": "assistant", "content": row["completion"]}]}
        check_row(kind, row, f"{path}:{line}", need_task_code)
        out.append({k: row[k] for k in KEEP[kind] if k in row})
    return out


def load_dataset(kind: str, path: str | Path, max_samples: int | None = None, need_task_code: bool = False):
    import hashlib
    import json

    import datasets
    from datasets.table import InMemoryTable

    rows = load_rows(kind, path, max_samples, need_task_code)
    # datasets fingerprints a new table by pickling it with dill, which fails on
    # some pyarrow/Python pairs (pyarrow 26 on Python 3.12: "Can't pickle
    # MonthDayNano"); a hash of the rows is as good a fingerprint and needs no pickling
    digest = hashlib.sha256(json.dumps(rows, sort_keys=True, default=str).encode()).hexdigest()[:16]
    return datasets.Dataset(InMemoryTable.from_pylist(rows), fingerprint=f"kernelmill-{kind}-{digest}")

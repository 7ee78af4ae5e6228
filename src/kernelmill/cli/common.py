"""What every stage's commands share, written once: the consoles, the error
exit, and the load-or-exit helpers (a source or file a command cannot use ends
it with exit 2 and one clear line; unreadable lines are reported and skipped).
"""

from __future__ import annotations

from pathlib import Path
from typing import NoReturn, Optional

import typer
from rich.console import Console
from rich.markup import escape

from ..records import ReadProblem, Sample, read_jsonl
from ..tasks import TaskSourceError, load_tasks

console = Console()
err = Console(stderr=True, soft_wrap=True)


def fail(message: str, code: int = 2) -> NoReturn:
    """Print `error: message` on stderr and end the command (2: bad input). The
    message is plain text: brackets in it (`pip install 'kernelmill[generate]'`) are shown."""
    err.print(f"[red]error:[/red] {escape(message)}")
    raise typer.Exit(code)


def warn(message: str, label: str = "warning") -> None:
    err.print(f"[yellow]{label}:[/yellow] {escape(message)}")


def report_problems(problems: list[ReadProblem], label: str = "skipped", limit: int = 20) -> None:
    """Unreadable lines, by file and line number (the first `limit`, then a count)."""
    for p in problems[:limit]:
        err.print(f"[yellow]{label}[/yellow] {p}")
    if len(problems) > limit:
        err.print(f"[yellow]{label}[/yellow] ... and {len(problems) - limit} more unreadable lines")


def load_tasks_or_exit(source: str):
    """Tasks for a command: a source that cannot be read ends the command with
    exit 2; files that are not tasks are reported by path and skipped."""
    try:
        ts = load_tasks(source)
    except TaskSourceError as exc:
        fail(str(exc))
    for p in ts.problems:
        err.print(f"[yellow]skipped task[/yellow] {p}")
    return ts


def maybe_tasks_or_exit(source: Optional[str]):
    """`load_tasks_or_exit` for an optional --tasks option (None when not given)."""
    return load_tasks_or_exit(source) if source else None


def load_samples_or_exit(path: Path) -> list[Sample]:
    """The samples of a file; a missing file, or one with no sample, exits 2."""
    if not Path(path).exists():
        fail(f"samples file not found: {path}")
    problems: list[ReadProblem] = []
    samples = read_jsonl(path, Sample, problems)
    report_problems(problems)
    if not samples:
        what = f"none of its {len(problems)} lines is a sample" if problems else "it is empty"
        fail(f"no samples in {path}: {what} (a line is a JSON object with sample_id, task_id, language and code)")
    return samples


def floats_or_exit(text: str, name: str) -> list[float]:
    """Comma-separated numbers of an option (`--p 0,0.5,1`)."""
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        fail(f"{name} must be comma-separated numbers, got {text!r}")

"""What every stage's commands share, written once: the load-or-exit helpers (a
source or file a command cannot use ends it with exit 2 and one clear line; unreadable
lines are reported and skipped). The consoles and the error exit are in console.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional


from ..records import ReadProblem, Sample, from_dict, iter_jsonl_numbered
from ..tasks import TaskSourceError, load_tasks
from .console import err, fail


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


# the pass@k values every command that prints metrics reports by default (one default everywhere)
PASS_AT_K = "1,10"
PASS_AT_K_HELP = "pass@k values, comma-separated; each is averaged over the tasks with >= k samples."


def load_samples_or_exit(path: Path) -> list[Sample]:
    """The samples of a file; a missing file, one with no sample, or one id given twice
    with different code exits 2 (naming both lines). The same sample twice counts once."""
    if not Path(path).exists():
        fail(f"samples file not found: {path}")
    problems: list[ReadProblem] = []
    samples: list[Sample] = []
    first: dict[str, tuple[int, str]] = {}
    repeated = 0
    for line, row in iter_jsonl_numbered(path, problems):
        try:
            sample = from_dict(Sample, row, where=f"{path}:{line}")
        except (TypeError, ValueError) as exc:
            problems.append(ReadProblem(str(path), line, str(exc)))
            continue
        if sample.sample_id in first:
            other, code = first[sample.sample_id]
            if code != sample.code:
                fail(f"{path}:{line}: sample id {sample.sample_id!r} is also at line {other} with other code; "
                     "an id names one candidate (give each its own id)")
            repeated += 1
            continue
        first[sample.sample_id] = (line, sample.code)
        samples.append(sample)
    report_problems(problems)
    if repeated:
        err.print(f"[yellow]note:[/yellow] {repeated} line(s) of {path} repeat an earlier sample exactly; counted once")
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

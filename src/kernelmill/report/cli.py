"""`kernelmill metrics`: Exec, fast_p, pass@k per level from a verdicts file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import typer
from rich.console import Console

from ..records import ReadProblem, Verdict, read_jsonl
from .metrics import RESAMPLES, SEED, metrics_by_level
from .table import metrics_json, metrics_table

# wide enough for the metrics table when stdout is a file or a pipe (COLUMNS, when set, wins)
console = Console() if Console().is_terminal or os.environ.get("COLUMNS") else Console(width=160)
err = Console(stderr=True)


def _floats(text: str, name: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        err.print(f"[red]error:[/red] {name} must be comma-separated numbers, got {text!r}")
        raise typer.Exit(2)


def print_metrics(verdicts: list[Verdict], ks: list[int] = (1,), ps: list[float] = (0, 0.5, 1, 1.5, 2),
                  as_json: bool = False, resamples: int = RESAMPLES, seed: int = SEED) -> dict:
    levels = metrics_by_level(verdicts, ps=ps, ks=ks, resamples=resamples, seed=seed)
    if as_json:
        print(json.dumps(metrics_json(levels), indent=2))
    else:
        console.print(metrics_table(levels, title=f"{len(verdicts)} verdicts"))
    return metrics_json(levels)


def metrics_command(
    verdicts_path: Path = typer.Argument(..., metavar="VERDICTS.jsonl"),
    k: str = typer.Option("1,10", "--k", help="pass@k values; each is averaged over the tasks with >= k samples."),
    p: str = typer.Option("0,0.5,1,1.5,2", "--p", help="fast_p thresholds."),
    tasks: str = typer.Option(None, help="Task source to fill in levels missing from the verdicts."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
    resamples: int = typer.Option(RESAMPLES, min=0, help="Bootstrap resamples for the 95% intervals (0: none)."),
    seed: int = typer.Option(SEED, help="Seed of the bootstrap, so the same verdicts print the same intervals."),
) -> None:
    """Exec, fast_p, pass@k (Exec and fast_1) and geometric-mean speedup, per level, with 95% intervals.

    Intervals: bootstrap over tasks, each speedup redrawn within its speedup_ci
    (src/kernelmill/report/intervals.py). "undecided" counts the correct samples
    whose speedup_ci holds p.
    """
    if not verdicts_path.exists():
        err.print(f"[red]error:[/red] verdicts file not found: {verdicts_path}")
        raise typer.Exit(2)
    problems: list[ReadProblem] = []
    verdicts = read_jsonl(verdicts_path, Verdict, problems)
    for prob in problems:
        err.print(f"[yellow]skipped[/yellow] {prob}")
    if tasks:
        from ..tasks import load_tasks

        levels = {t.task_id: t.level for t in load_tasks(tasks)}
        for v in verdicts:
            if v.level is None:
                v.level = levels.get(v.task_id)
    ks = [int(x) for x in _floats(k, "--k")]
    print_metrics(verdicts, ks=ks, ps=_floats(p, "--p"), as_json=as_json, resamples=resamples, seed=seed)

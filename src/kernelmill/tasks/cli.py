"""`kernelmill tasks ...`: list and show tasks from any source."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.syntax import Syntax
from rich.table import Table

from .sources import TaskSourceError, load_tasks

app = typer.Typer(help="List and inspect tasks (KernelBench folders, JSONL/Parquet tables, 'builtin').",
                  no_args_is_help=True)
console = Console()
err = Console(stderr=True)


def load_tasks_or_exit(source: str):
    """Tasks for a command: a source that cannot be read ends the command with
    exit 2; files that are not tasks are reported by path and skipped."""
    try:
        ts = load_tasks(source)
    except TaskSourceError as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2)
    for p in ts.problems:
        err.print(f"[yellow]skipped task[/yellow] {p}")
    return ts


@app.command("list")
def list_tasks(source: str = typer.Argument(..., help="Folder, .jsonl/.parquet table, or 'builtin'.")) -> None:
    """List the tasks of SOURCE with their level and type."""
    ts = load_tasks_or_exit(source)
    table = Table(title=f"{len(ts)} tasks from {source}")
    for col in ("task_id", "name", "level", "op_type", "sizes"):
        table.add_column(col)
    for t in ts:
        table.add_row(t.task_id, t.name, str(t.level or ""), t.op_type or "", ",".join(sorted(t.sizes)))
    console.print(table)


@app.command("show")
def show_task(source: str = typer.Argument(..., help="Folder, table, or 'builtin'."),
              task_id: str = typer.Argument(..., help="e.g. level1/19_ReLU")) -> None:
    """Print one task's metadata and code."""
    ts = load_tasks_or_exit(source)
    task = ts.by_id().get(task_id)
    if task is None:
        err.print(f"[red]error:[/red] no task {task_id!r} in {source} ({len(ts)} tasks; try `kernelmill tasks list {source}`)")
        raise typer.Exit(2)
    console.print(f"[bold]{task.task_id}[/bold]  name={task.name} level={task.level} op_type={task.op_type} sizes={task.sizes}")
    console.print(Syntax(task.code, "python", line_numbers=True))

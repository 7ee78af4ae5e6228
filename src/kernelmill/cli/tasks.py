"""`kernelmill tasks ...`: list, show and audit tasks from any source."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.syntax import Syntax
from rich.table import Table

from .common import load_tasks_or_exit
from .console import console, err, fail

app = typer.Typer(help="List and inspect tasks (KernelBench folders, JSONL/Parquet tables, 'builtin').",
                  no_args_is_help=True)


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
              task_id: str = typer.Argument(..., help="e.g. level1/01_ReLU (builtin)")) -> None:
    """Print one task's metadata and code."""
    ts = load_tasks_or_exit(source)
    task = ts.by_id().get(task_id)
    if task is None:
        fail(f"no task {task_id!r} in {source} ({len(ts)} tasks; try `kernelmill tasks list {source}`)")
    console.print(f"[bold]{task.task_id}[/bold]  name={task.name} level={task.level} op_type={task.op_type} sizes={task.sizes}")
    console.print(Syntax(task.code, "python", line_numbers=True))


@app.command("audit")
def audit_tasks(
    source: str = typer.Argument(..., help="Folder, .jsonl/.parquet table, or 'builtin'."),
    profile: str = typer.Option("auto", help="Task size profile: auto (small on CPU, full on CUDA), small, full."),
    json_out: Path = typer.Option(None, "--json", help="Write every figure per task to this JSON file."),
    limit: int = typer.Option(0, help="Audit only the first N tasks (0 = all)."),
    timeout: float = typer.Option(300.0, help="Seconds per task before it is reported as a timeout."),
    trials: int = typer.Option(2, help="Input sets per task (at least 2), each drawn with its own seed."),
    device: str = typer.Option("cpu", help="Device to run the references on: cpu or cuda."),
    memory_gb: float = typer.Option(8.0, help="Memory limit per task's process."),
    threads: int = typer.Option(0, help="torch threads per task's process (0 = torch's default)."),
    only: str = typer.Option("", help="Audit only task ids containing this text (e.g. level1/)."),
) -> None:
    """Would a trivial candidate (zeros, a constant, per-channel means, noise,
    the input itself) pass the correctness check on each task? See docs/task_audit.md."""
    if profile not in ("auto", "small", "full"):
        fail(f"--profile must be auto, small or full (got {profile!r})")
    if trials < 2:
        fail(f"--trials must be at least 2 (got {trials})")
    ts = load_tasks_or_exit(source)
    tasks = [t for t in ts if only in t.task_id]
    if limit > 0:
        tasks = tasks[:limit]
    from ..tasks.audit import AuditOptions, render_table, run_audit  # torch: not for --help

    opts = AuditOptions(profile=profile, device=device, trials=trials, timeout_s=timeout,
                        memory_gb=memory_gb, threads=threads)
    progress = Progress(TextColumn("[bold]audit[/bold]"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        TextColumn("{task.description}"), console=err, transient=True)
    # SIGTERM stops the audit like Ctrl-C (a run in the background ignores SIGINT)
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        with progress:
            bar = progress.add_task("", total=len(tasks))
            report = run_audit(tasks, source, opts,
                               on_start=lambda t: progress.update(bar, description=t.task_id),
                               on_done=lambda a: _audit_done(progress, bar, a))
    finally:
        signal.signal(signal.SIGTERM, previous)
    console.print(render_table(report))
    console.print(report.summary_line())
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(report.to_dict(), indent=1) + "\n", encoding="utf-8")
        console.print(f"wrote {json_out}")
    if report.interrupted:
        raise typer.Exit(130)


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def _audit_done(progress: Progress, bar, audit) -> None:
    """Advance the bar; where stderr is a log rather than a terminal (no live
    bar), say which task finished, so a long run can be followed."""
    progress.advance(bar)
    if not err.is_terminal:
        weak = ",".join(audit.weak_by) or "-"
        err.print(f"audit {audit.task_id}: {audit.status} in {audit.wall_s:.1f} s, weak by {weak}"
                  + (f" ({audit.message[:120]})" if audit.message else ""), soft_wrap=True)

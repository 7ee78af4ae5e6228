"""`kernelmill metrics`, `report` and `show`: thin commands over `kernelmill.report`."""

from __future__ import annotations

from pathlib import Path

import typer

from ..report.metrics import RESAMPLES, SEED
from ..report.output import console, print_metrics, write_report
from .common import PASS_AT_K, PASS_AT_K_HELP, floats_or_exit, maybe_tasks_or_exit
from .console import fail, warn

_floats = floats_or_exit


def metrics_command(
    verdicts_path: Path = typer.Argument(..., metavar="VERDICTS.jsonl"),
    k: str = typer.Option(PASS_AT_K, "--k", help=PASS_AT_K_HELP),
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
    from ..report.inputs import ReportInputError, load_inputs

    try:
        inputs = load_inputs(verdicts_path, None, tasks)
    except ReportInputError as exc:
        fail(f"{exc}")
    for w in inputs.warnings:
        warn(w)
    verdicts = inputs.verdicts
    ks = [int(x) for x in _floats(k, "--k")]
    print_metrics(verdicts, ks=ks, ps=_floats(p, "--p"), as_json=as_json, resamples=resamples, seed=seed)


def report_command(
    verdicts_path: Path = typer.Argument(..., metavar="VERDICTS.jsonl"),
    samples: Path = typer.Option(None, "--samples", "-s", help="Samples JSONL: adds languages, code and reasoning."),
    tasks: str = typer.Option(None, "--tasks", "-t", help="Task source (folder, table, 'builtin'): adds names, "
                                                          "levels and op_types, and names verdicts of unknown tasks."),
    out: Path = typer.Option(Path("report.html"), "-o", "--out", help="The HTML page (self-contained)."),
    markdown_path: Path = typer.Option(None, "--markdown", help="Markdown summary (default: OUT with .md)."),
    csv_path: Path = typer.Option(None, "--csv", help="CSV summary (default: OUT with .csv)."),
    k: str = typer.Option(PASS_AT_K, "--k", help=PASS_AT_K_HELP),
    p: str = typer.Option("0,0.5,1,1.5,2", "--p", help="fast_p thresholds."),
    resamples: int = typer.Option(RESAMPLES, min=0, help="Bootstrap resamples for the 95% intervals (0: none)."),
    seed: int = typer.Option(SEED, help="Seed of the bootstrap."),
    code: bool = typer.Option(True, "--code/--no-code", help="Include each sample's code (highlighted)."),
    title: str = typer.Option("kernelmill report", help="Page title."),
) -> None:
    """One self-contained HTML page over a verdicts file (metrics per level, language and op_type with 95%
    intervals, fast_p curve, speedup histogram, statuses and flags, every task's samples with search and
    sort), plus Markdown and CSV summaries."""
    from ..report.inputs import ReportInputError, load_inputs

    ks = [int(x) for x in _floats(k, "--k")]
    ps = _floats(p, "--p")
    try:
        inputs = load_inputs(verdicts_path, samples, tasks)
    except ReportInputError as exc:
        fail(f"{exc}")
    if not inputs.verdicts:
        fail(f"{verdicts_path} holds no verdicts")
    for w in inputs.warnings:
        warn(w)
    written = write_report(inputs, out, markdown_path, csv_path, ps=ps, ks=ks, resamples=resamples, seed=seed,
                           with_code=code, title=title)
    for path in written:
        console.print(f"wrote {path}")


def show_command(
    sample_id: str = typer.Argument(..., help="A sample id (as in the samples and verdicts files)."),
    samples: Path = typer.Option(None, "--samples", "-s", help="Samples JSONL (default: kernelmill-out/samples.jsonl "
                                                               "when it exists)."),
    verdicts: Path = typer.Option(None, "--verdicts", "-v", help="Verdicts JSONL (default: kernelmill-out/verdicts.jsonl "
                                                                 "when it exists)."),
    store: Path = typer.Option(None, "--store", help="Result store to read the verdict from when no verdicts file "
                                                     "is given (e.g. kernelmill-out/verdicts.sqlite)."),
    tasks: str = typer.Option(None, "--tasks", "-t", help="Task source: adds the task's name and level."),
    code: bool = typer.Option(True, "--code/--no-code", help="Print the sample's code."),
    task_code: bool = typer.Option(False, "--task-code", help="Print the task's reference program too."),
) -> None:
    """Print one sample with its task, its verdict and the reasons (message, flags and what they mean)."""
    from ..report.inputs import ReportInputError
    from ..report.show import find_sample, render_text

    default = Path("kernelmill-out")
    if samples is None and (default / "samples.jsonl").exists():
        samples = default / "samples.jsonl"
    if verdicts is None and store is None and (default / "verdicts.jsonl").exists():
        verdicts = default / "verdicts.jsonl"
    if samples is None and verdicts is None and store is None:
        fail("give --samples and --verdicts (or --store): no kernelmill-out/ here")
    ts = maybe_tasks_or_exit(tasks)
    try:
        view = find_sample(sample_id, samples, verdicts, store, list(ts.tasks) if ts else None)
    except ReportInputError as exc:
        fail(f"{exc}")
    print(render_text(view, code=code, task_code=task_code), end="")

"""The metrics table on the terminal, and its JSON form.

One row per metric and one column per level: levels are few (KernelBench has
three or four) while `--p` and `--k` can add any number of metrics, so the
table grows downwards and a point figure keeps its interval beside it on a
100-column terminal.
"""

from __future__ import annotations

from dataclasses import asdict

from rich.table import Table
from rich.text import Text

from .metrics import MetricSet


def metrics_json(levels: dict[str, MetricSet]) -> dict:
    return {name: asdict(m) for name, m in levels.items()}


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _with_ci(point: str, ci: list[float] | None, fmt) -> Text:
    cell = Text(point)
    if ci is not None:
        cell.append(f" {fmt(ci[0])}–{fmt(ci[1])}", style="dim")
    return cell


def _pass_cell(m: MetricSet, k: str, value: float | None) -> Text:
    """pass@k, with the tasks it was computed on when that is fewer than all."""
    cell = Text(_pct(value))
    covered = m.pass_tasks.get(k, m.tasks - m.tasks_below_k.get(k, 0))
    if covered < m.tasks:
        cell.append(f" ({covered}/{m.tasks})", style="yellow")
    return cell


def metrics_table(levels: dict[str, MetricSet], title: str = "metrics") -> Table:
    names = list(levels)
    first = levels[names[0]]
    table = Table(title=title, title_justify="left", caption_justify="left")
    table.add_column("metric", no_wrap=True)
    for name in names:
        table.add_column(name, justify="right")  # wraps before the interval when too narrow

    def row(label: str, cell, end_section: bool = False) -> None:
        table.add_row(label, *(cell(levels[n]) for n in names), end_section=end_section)

    row("tasks", lambda m: str(m.tasks))
    row("samples", lambda m: str(m.samples), end_section=True)
    row("Exec", lambda m: _with_ci(_pct(m.exec), m.exec_ci, lambda x: f"{100 * x:.1f}"))
    for p in first.fast:
        row(f"fast_{p}", lambda m, p=p: _with_ci(_pct(m.fast.get(p)), m.fast_ci.get(p), lambda x: f"{100 * x:.1f}"))
        if any(lv.fast_undecided.get(p) for lv in levels.values()):
            row("  undecided", lambda m, p=p: Text(str(m.fast_undecided.get(p, 0)), style="yellow"))
    row("G_speedup", lambda m: _with_ci("-" if m.geomean_speedup is None else f"{m.geomean_speedup:.2f}x",
                                        m.geomean_speedup_ci, lambda x: f"{x:.2f}"), end_section=True)
    if any(lv.timed_compiled_samples for lv in levels.values()):  # verify --compile-baseline
        for p in first.fast:
            row(f"fast_{p} compiled", lambda m, p=p: Text(_pct(m.fast_compiled.get(p)) if m.fast_compiled else "-"))
        row("G_speedup compiled", lambda m: Text("-" if m.geomean_speedup_compiled is None
                                                 else f"{m.geomean_speedup_compiled:.2f}x"), end_section=True)
    for k in first.pass_exec:
        row(f"Exec@{k}", lambda m, k=k: _pass_cell(m, k, m.pass_exec.get(k)))
        row(f"fast_1@{k}", lambda m, k=k: _pass_cell(m, k, m.pass_fast1.get(k)))
    table.caption = "\n".join(_notes(levels))
    return table


def not_run_note(m: MetricSet, max_tasks: int = 5) -> str:
    """One line on the verdicts left out of the metrics because their candidates never ran."""
    from .metrics import NOT_RUN_FLAGS

    parts = []
    for flag, n in sorted(m.not_run.items()):
        what = NOT_RUN_FLAGS[flag].removeprefix("not run: ")
        if flag == "unknown_task" and m.not_run_tasks:
            names = ", ".join(m.not_run_tasks[:max_tasks])
            more = len(m.not_run_tasks) - max_tasks
            what += f" ({names}{f' and {more} more' if more > 0 else ''})"
        parts.append(f"{n} {flag} ({what})" if flag != "unknown_task" else f"{n} {flag}: {what}")
    return "not run, in no figure above: " + "; ".join(parts)


def _notes(levels: dict[str, MetricSet]) -> list[str]:
    """The footnotes: how to read the intervals, the undecided rows and pass@k coverage."""
    overall = levels["all"]
    notes = []
    if overall.ci_resamples:
        notes.append(f"x% lo–hi: point figure, then its 95% interval: bootstrap over tasks "
                     f"({overall.ci_resamples} resamples, seed {overall.ci_seed}) with each speedup redrawn within its own speedup_ci "
                     f"({overall.samples_with_speedup_ci} of {overall.timed_samples} timed samples have one).")
    if any(lv.timed_compiled_samples for lv in levels.values()):
        notes.append(f"compiled: against the reference under torch.compile ({overall.timed_compiled_samples} of "
                     f"{overall.timed_samples} timed samples have that baseline; the others count as not fast).")
    undecided = {p: n for p, n in overall.fast_undecided.items() if n}
    if undecided:
        notes.append("undecided: correct samples whose speedup_ci holds p; counted all slow or all fast, "
                     "fast_p overall would be " + "; ".join(
                         f"fast_{p} {_pct(overall.fast_bounds[p][0])}–{_pct(overall.fast_bounds[p][1])}"
                         for p in undecided) + ".")
    partial = [k for k in overall.pass_exec
               if any(m.pass_tasks.get(k, m.tasks) < m.tasks for m in levels.values())]
    if partial:
        notes.append(f"@k: unbiased pass@k (Chen et al. 2021) over the tasks with at least k samples; '(a/b)' = "
                     f"computed on a of b tasks (@{', @'.join(partial)}), so it may sit below a smaller k's figure.")
    else:
        notes.append("@k: unbiased pass@k (Chen et al. 2021), every task has at least k samples.")
    notes.append("statuses: " + ", ".join(f"{s} {n}" for s, n in overall.statuses.items() if n))
    if overall.not_run:
        notes.append(not_run_note(overall))
    flagged = sorted(overall.guard_flags.items(), key=lambda kv: (-kv[1], kv[0]))
    if flagged:  # what the reward-hacking guards caught (docs/guards.md)
        notes.append("rejected/incorrect by flag: " + ", ".join(f"{f} {n}" for f, n in flagged))
    return notes

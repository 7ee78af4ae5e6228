"""The metrics table on the terminal, and its JSON form."""

from __future__ import annotations

from dataclasses import asdict

from rich.table import Table

from .metrics import MetricSet


def metrics_json(levels: dict[str, MetricSet]) -> dict:
    return {name: asdict(m) for name, m in levels.items()}


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def metrics_table(levels: dict[str, MetricSet], title: str = "metrics") -> Table:
    first = next(iter(levels.values()))
    table = Table(title=title)
    table.add_column("level")
    table.add_column("tasks", justify="right")
    table.add_column("samples", justify="right")
    table.add_column("Exec", justify="right")
    for p in first.fast:
        table.add_column(f"fast_{p}", justify="right")
    for k in first.pass_exec:
        table.add_column(f"Exec@{k}", justify="right")
        table.add_column(f"fast_1@{k}", justify="right")
    table.add_column("G_speedup", justify="right")
    for name, m in levels.items():
        row = [name, str(m.tasks), str(m.samples), _pct(m.exec)]
        row += [_pct(v) for v in m.fast.values()]
        for k in m.pass_exec:
            row += [_pct(m.pass_exec[k]), _pct(m.pass_fast1[k])]
        row.append("-" if m.geomean_speedup is None else f"{m.geomean_speedup:.2f}x")
        table.add_row(*row, end_section=(name == list(levels)[-2]) if len(levels) > 1 else False)
    overall = levels["all"].statuses
    table.caption = "statuses: " + ", ".join(f"{s} {n}" for s, n in overall.items() if n)
    flagged = sorted(levels["all"].guard_flags.items(), key=lambda kv: (-kv[1], kv[0]))
    if flagged:  # what the reward-hacking guards caught (docs/guards.md)
        table.caption += "\nrejected/incorrect by flag: " + ", ".join(f"{f} {n}" for f, n in flagged)
    return table

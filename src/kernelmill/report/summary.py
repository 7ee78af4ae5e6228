"""The metrics of a report, grouped three ways, and their Markdown and CSV forms.

`breakdown` computes report/metrics.py's `MetricSet` per level, per kernel
language and per op_type (each with the same bootstrap intervals as
`kernelmill metrics`). The Markdown tables put one group per row, for pasting
into a paper; the CSV has one row per (grouping, group) with every point
figure and its interval bounds in columns of their own.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from typing import Sequence

from .inputs import ReportInputs
from .metrics import RESAMPLES, SEED, MetricSet, level_name, metrics_by

GROUPINGS = ("level", "language", "op_type")


@dataclass
class Breakdown:
    ps: list[float]
    ks: list[int]
    groups: dict[str, dict[str, MetricSet]] = field(default_factory=dict)  # grouping -> group -> metrics

    @property
    def overall(self) -> MetricSet:
        return self.groups["level"]["all"]


def breakdown(inputs: ReportInputs, ps: Sequence[float] = (0, 0.5, 1, 1.5, 2), ks: Sequence[int] = (1,),
              resamples: int = RESAMPLES, seed: int = SEED) -> Breakdown:
    keys = {"level": level_name, "language": inputs.language, "op_type": inputs.op_type}
    out = Breakdown(list(ps), list(ks))
    for name in GROUPINGS:
        # "all" only once, under level: the same set in every grouping
        out.groups[name] = metrics_by(inputs.verdicts, keys[name], ps, ks, resamples=resamples, seed=seed,
                                      overall=name == "level")
        if name != "level":
            out.groups[name] = {g: m for g, m in out.groups[name].items() if m.samples or m.not_run}
    return out


def pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def ci_text(ci: list[float] | None, scale: float = 100.0, digits: int = 1) -> str:
    return "" if ci is None else f"{scale * ci[0]:.{digits}f}–{scale * ci[1]:.{digits}f}"


def speedup_text(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}x"


def columns(b: Breakdown) -> list[tuple[str, str]]:
    """(key, header) of the per-group metric columns, in table order."""
    cols = [("tasks", "tasks"), ("samples", "samples"), ("exec", "Exec")]
    cols += [(f"fast_{p:g}", f"fast_{p:g}") for p in b.ps]
    cols += [("geomean_speedup", "G_speedup")]
    if b.overall.timed_compiled_samples:  # verify --compile-baseline: the same against torch.compile
        cols += [(f"compiled_fast_{p:g}", f"fast_{p:g} compiled") for p in b.ps]
        cols += [("compiled_geomean_speedup", "G_speedup compiled")]
    for k in b.ks:
        cols += [(f"exec@{k}", f"Exec@{k}"), (f"fast_1@{k}", f"fast_1@{k}")]
    return cols


def cell(m: MetricSet, key: str) -> tuple[float | None, list[float] | None]:
    """(point value, 95% interval) of one column for one group (fractions for shares)."""
    if key in ("tasks", "samples"):
        return float(getattr(m, key)), None
    if key == "exec":
        return (m.exec if m.tasks else None), m.exec_ci
    if key == "compiled_geomean_speedup":
        return m.geomean_speedup_compiled, None
    if key.startswith("compiled_fast_"):
        return (m.fast_compiled.get(key[len("compiled_fast_"):]) if m.timed_compiled_samples else None), None
    if key.startswith("fast_") and "@" not in key:
        p = key[len("fast_"):]
        return (m.fast.get(p) if m.tasks else None), m.fast_ci.get(p)
    if key == "geomean_speedup":
        return m.geomean_speedup, m.geomean_speedup_ci
    name, k = key.split("@")
    return (m.pass_exec if name == "exec" else m.pass_fast1).get(k), None


def cell_text(key: str, value: float | None, ci: list[float] | None, with_ci: bool = True) -> tuple[str, str]:
    """(point, interval) as shown in the tables."""
    if key in ("tasks", "samples"):
        return str(int(value)), ""
    if key in ("geomean_speedup", "compiled_geomean_speedup"):
        return speedup_text(value), ci_text(ci, 1.0, 2) if with_ci else ""
    return pct(value), ci_text(ci) if with_ci else ""


def markdown(b: Breakdown, inputs: ReportInputs) -> str:
    cols = columns(b)
    lines = ["# kernelmill report", ""]
    for name, src in inputs.sources.items():
        lines.append(f"- {name}: `{src}`")
    m = b.overall
    lines += ["", f"{m.samples} samples of {m.tasks} tasks. Cells: point figure, then its 95% interval "
              f"(bootstrap over tasks, {m.ci_resamples} resamples, seed {m.ci_seed}, each speedup redrawn within "
              f"its own speedup_ci).", ""]
    for grouping, groups in b.groups.items():
        if not groups:
            continue
        lines.append(f"## by {grouping}")
        lines.append("")
        lines.append("| " + " | ".join([grouping] + [h for _, h in cols]) + " |")
        lines.append("|" + "|".join(["---"] + ["---:"] * len(cols)) + "|")
        for g, gm in groups.items():
            cells = []
            for key, _ in cols:
                point, ci = cell_text(key, *cell(gm, key))
                cells.append(f"{point} [{ci}]" if ci else point)
            lines.append("| " + " | ".join([f"**{g}**" if g == "all" else g] + cells) + " |")
        lines.append("")
    lines += ["## statuses", "", "| status | samples |", "|---|---:|"]
    lines += [f"| {s} | {n} |" for s, n in m.statuses.items()]
    if m.not_run:
        lines += [f"| not run ({flag}) | {n} |" for flag, n in sorted(m.not_run.items())]
    if m.guard_flags:
        lines += ["", "## rejected or incorrect, by guard flag", "", "| flag | samples |", "|---|---:|"]
        lines += [f"| {f} | {n} |" for f, n in sorted(m.guard_flags.items(), key=lambda kv: (-kv[1], kv[0]))]
    return "\n".join(lines) + "\n"


def csv_text(b: Breakdown) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    cols = columns(b)
    header = ["grouping", "group"]
    for key, _ in cols:
        header.append(key)
        if key not in ("tasks", "samples") and "@" not in key:
            header += [f"{key}_lo", f"{key}_hi"]
    w.writerow(header)
    for grouping, groups in b.groups.items():
        for g, gm in groups.items():
            row: list = [grouping, g]
            for key, _ in cols:
                value, ci = cell(gm, key)
                row.append("" if value is None else (int(value) if key in ("tasks", "samples") else round(value, 6)))
                if key not in ("tasks", "samples") and "@" not in key:
                    row += ["", ""] if ci is None else [round(ci[0], 6), round(ci[1], 6)]
            w.writerow(row)
    return buf.getvalue()

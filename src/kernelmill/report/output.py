"""Writing what the report stage computes: the metrics table on the console
and the report files (HTML page, Markdown and CSV summaries). Used by the
`metrics`, `report`, `verify` and `demo` commands alike."""

from __future__ import annotations

import json
import os
from pathlib import Path

from rich.console import Console

from ..records import Verdict
from .metrics import RESAMPLES, SEED, metrics_by_level
from .table import metrics_json, metrics_table

# wide enough for the metrics table when stdout is a file or a pipe (COLUMNS, when set, wins)
console = Console() if Console().is_terminal or os.environ.get("COLUMNS") else Console(width=160)


def print_metrics(verdicts: list[Verdict], ks: list[int] = (1,), ps: list[float] = (0, 0.5, 1, 1.5, 2),
                  as_json: bool = False, resamples: int = RESAMPLES, seed: int = SEED) -> dict:
    levels = metrics_by_level(verdicts, ps=ps, ks=ks, resamples=resamples, seed=seed)
    if as_json:
        print(json.dumps(metrics_json(levels), indent=2))
    else:
        console.print(metrics_table(levels, title=f"{len(verdicts)} verdicts"))
    return metrics_json(levels)


def write_report(inputs, out: Path, markdown_path: Path | None = None, csv_path: Path | None = None,
                 ps=(0, 0.5, 1, 1.5, 2), ks=(1,), resamples: int = RESAMPLES, seed: int = SEED,
                 with_code: bool = True, title: str = "kernelmill report") -> list[Path]:
    """The HTML page, and the Markdown and CSV summaries beside it (same stem
    unless given); each written whole to a temp file, then renamed."""
    from .html import render_html
    from .summary import breakdown, csv_text, markdown

    b = breakdown(inputs, ps=ps, ks=ks, resamples=resamples, seed=seed)
    written = []
    for path, text in ((out, lambda: render_html(inputs, b, with_code=with_code, title=title, seed=seed)),
                       (markdown_path or out.with_suffix(".md"), lambda: markdown(b, inputs)),
                       (csv_path or out.with_suffix(".csv"), lambda: csv_text(b))):
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(text(), encoding="utf-8")
        os.replace(tmp, path)
        written.append(path)
    return written

"""A progress bar that counts verdicts by status (rich, on stderr)."""

from __future__ import annotations

from collections import Counter

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

_COLOURS = {"ok": "green", "incorrect": "yellow", "compile_error": "red", "runtime_error": "magenta",
            "timeout": "cyan", "rejected": "bright_red"}


class StatusProgress:
    def __init__(self, total: int, enabled: bool, device: str = ""):
        self.counts: Counter[str] = Counter()
        self.cached = 0
        self._progress = None
        if enabled and total:
            self._progress = Progress(
                TextColumn("[bold]verify[/bold]"), BarColumn(), MofNCompleteColumn(),
                TimeElapsedColumn(), TimeRemainingColumn(), TextColumn("{task.description}"),
                console=Console(stderr=True), transient=False)
            self._task = self._progress.add_task(self._text(), total=total)
            self._progress.start()
            if device:
                self._progress.console.print(f"device: {device}")

    def _text(self) -> str:
        parts = [f"[{_COLOURS.get(s, 'white')}]{s} {n}[/]" for s, n in sorted(self.counts.items())]
        if self.cached:
            parts.append(f"[dim]cached {self.cached}[/dim]")
        return " ".join(parts)

    def advance(self, status: str, cached: bool = False) -> None:
        self.counts[status] += 1
        self.cached += int(cached)
        if self._progress is not None:
            self._progress.update(self._task, advance=1, description=self._text())

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

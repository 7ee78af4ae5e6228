"""The live progress line: done/total, requests in flight, tokens/s, errors
by kind, retries. Reads `GenerationStats`, which the backends update."""

from __future__ import annotations

import contextlib
from typing import Iterator

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn, TimeElapsedColumn
from rich.text import Text

from .backend import GenerationStats


class _StatsColumn(ProgressColumn):
    def __init__(self, stats: GenerationStats):
        super().__init__()
        self.stats = stats

    def render(self, task) -> Text:
        s = self.stats
        return Text(f"in flight {s.in_flight}  {s.tokens_per_s():,.0f} tok/s  "
                    f"retries {s.retries}  errors: {s.errors_text()}")


class ProgressView:
    """Call `update()` after each finished request; no-op when disabled."""

    def __init__(self, progress: Progress | None, task_id=None):
        self._p, self._t = progress, task_id

    def update(self, done: int) -> None:
        if self._p is not None:
            self._p.update(self._t, completed=done)


@contextlib.contextmanager
def live_progress(stats: GenerationStats, description: str, enabled: bool,
                  console: Console | None = None) -> Iterator[ProgressView]:
    if not enabled:
        yield ProgressView(None)
        return
    progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn(), _StatsColumn(stats), console=console or Console(stderr=True),
                        refresh_per_second=4)
    with progress:
        task = progress.add_task(description, total=stats.total)
        yield ProgressView(progress, task)
        progress.update(task, completed=stats.done)

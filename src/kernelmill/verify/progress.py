"""Progress and accounting of a verification run: counts by status, builds/s,
GPU busy share, ETA (a rich bar on stderr; `stats()` for programs)."""

from __future__ import annotations

import threading
import time
from collections import Counter

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

_COLOURS = {"ok": "green", "incorrect": "yellow", "compile_error": "red", "runtime_error": "magenta",
            "timeout": "cyan", "rejected": "bright_red"}


class StatusProgress:
    def __init__(self, total: int, enabled: bool, device: str = "", gpus: int = 0):
        self.counts: Counter[str] = Counter()
        self.cached = 0
        self.total = total
        self.gpus = gpus
        self._lock = threading.Lock()
        self._t0 = time.monotonic()
        self.builds = self.warm_builds = self.split_builds = self.fallback_builds = 0
        self.merged_builds = self.pch_builds = 0  # binding and host as one unit; a precompiled header used
        self.build_s = 0.0
        self.runs = 0
        self.run_compiles = 0  # extensions compiled in run processes (lazy calls the build phase missed)
        self.lazy_prebuilt = 0  # lazy load_inline calls built in the build phase
        self._spans: dict[str, list[tuple[float, float]]] = {}  # each run worker's busy intervals
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
        st = self.stats()
        if self.builds:
            parts.append(f"[dim]builds {self.builds} ({st['builds_per_s']:.2f}/s)[/dim]")
        if st["gpu_busy_share"] is not None:
            parts.append(f"[dim]gpu busy {100 * st['gpu_busy_share']:.0f}%[/dim]")
        return " ".join(parts)

    def note_build(self, seconds: float, info: dict | None = None) -> None:
        """A build finished (any thread); `info` is the fast builder's log."""
        with self._lock:
            self.builds += 1
            self.build_s += seconds
            if info:
                self.lazy_prebuilt += int(info.get("lazy_built", 0))
                self.warm_builds += bool(info.get("warm"))
                self.split_builds += bool(info.get("cuda_split"))
                self.merged_builds += bool(info.get("merged"))
                self.pch_builds += bool(info.get("pch_used"))
                self.fallback_builds += bool(info.get("fallback"))

    def note_run(self, worker, start: float, end: float, compiles: int = 0) -> None:
        """A run worker (a GPU, or the CPU) was busy from `start` to `end` (monotonic),
        and compiled `compiles` extensions meanwhile."""
        with self._lock:
            self.runs += 1
            self.run_compiles += int(compiles or 0)
            self._spans.setdefault(str(worker), []).append((start, end))

    def stats(self) -> dict:
        """Counts and rates so far. `gpu_busy_share` is the time each GPU had at least
        one run on it (the runs sharing a GPU counted once: runs_per_gpu), summed over
        GPUs, over (number of GPUs x time from the first run's start to the last run's
        end): what is missing from 1 is the time GPUs waited for builds. `run_busy_share`
        is the same figure for any run workers (CPU ones too); `busy_share_by_worker`
        splits it by worker (a GPU's index, or the CPU slot). `run_busy_s` sums the
        runs' own times (two runs sharing a GPU for 1 s count 2 s there)."""
        with self._lock:
            wall = time.monotonic() - self._t0
            union = {k: covered_seconds(v) for k, v in self._spans.items()}
            busy = sum(union.values())
            spans = [x for v in self._spans.values() for x in v]
            span = (max(e for _, e in spans) - min(st for st, _ in spans)) if spans else 0.0
            n = max(1, self.gpus or len(self._spans))
            share = busy / (n * span) if span > 0 else None
            return {
                "done": sum(self.counts.values()), "total": self.total, "counts": dict(self.counts),
                "cached": self.cached, "wall_s": wall, "builds": self.builds, "warm_builds": self.warm_builds,
                "split_builds": self.split_builds, "fallback_builds": self.fallback_builds,
                "merged_builds": self.merged_builds, "pch_builds": self.pch_builds,
                "build_s": self.build_s, "builds_per_s": self.builds / wall if wall > 0 else 0.0,
                "runs": self.runs, "run_busy_s": sum(e - st for st, e in spans), "run_compiles": self.run_compiles,
                "lazy_prebuilt": self.lazy_prebuilt, "run_workers": len(self._spans),
                "gpu_busy_share": share if self.gpus else None, "run_busy_share": share,
                # each run worker's (each GPU's, when one run shares a GPU) busy time over the same span
                "busy_share_by_worker": ({k: round(v / span, 4) for k, v in sorted(union.items())}
                                         if span > 0 else {}),
                "per_minute": 60 * sum(self.counts.values()) / wall if wall > 0 else 0.0,
            }

    def advance(self, status: str, cached: bool = False) -> None:
        self.counts[status] += 1
        self.cached += int(cached)
        if self._progress is not None:
            self._progress.update(self._task, advance=1, description=self._text())

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


def covered_seconds(spans: list[tuple[float, float]]) -> float:
    """Seconds covered by at least one of the intervals."""
    total, reach = 0.0, float("-inf")
    for start, end in sorted(spans):
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total

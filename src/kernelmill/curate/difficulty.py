"""Task difficulty from average reasoning length (ARL), SPEC.md section 1.

ARL of a task = mean `reasoning_tokens` over its generations that have a count
(the paper uses M = 10 generations a task). Buckets: easy when ARL < 4000,
medium when 4000 <= ARL <= 8500, hard when ARL > 8500 (thresholds are
parameters); a task with no counted generation is `unknown`.

Per bucket, as the paper's table: Exec = share of tasks with at least one
correct generation; G_speedup = geometric mean of the speedups of the correct
generations (speedups <= 0 cannot enter a geometric mean and are counted
apart); plus fast_1 = share of tasks whose best speedup is > 1.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from statistics import fmean

from .inputs import Generation
from .recipes import by_task

EASY_BELOW = 4000.0
HARD_ABOVE = 8500.0
BUCKETS = ("easy", "medium", "hard", "unknown")


@dataclass
class TaskDifficulty:
    task_id: str
    generations: int
    counted: int
    arl: float | None
    bucket: str
    correct: int
    best_speedup: float | None


def bucket_of(arl: float | None, easy_below: float = EASY_BELOW, hard_above: float = HARD_ABOVE) -> str:
    if arl is None:
        return "unknown"
    if arl < easy_below:
        return "easy"
    return "hard" if arl > hard_above else "medium"


def task_difficulty(gens: list[Generation], easy_below: float = EASY_BELOW,
                    hard_above: float = HARD_ABOVE) -> list[TaskDifficulty]:
    if easy_below > hard_above:
        raise ValueError(f"easy threshold {easy_below} is above hard threshold {hard_above}")
    out = []
    for task_id, group in by_task(gens).items():
        lengths = [g.length for g in group if g.length is not None]
        arl = fmean(lengths) if lengths else None
        speeds = [g.speedup for g in group if g.speedup is not None]
        out.append(TaskDifficulty(task_id, len(group), len(lengths), arl,
                                  bucket_of(arl, easy_below, hard_above),
                                  sum(g.correct for g in group), max(speeds) if speeds else None))
    return out


def geometric_mean(values: list[float]) -> float | None:
    vals = [v for v in values if v > 0]
    if not vals:
        return None
    return math.exp(fmean(math.log(v) for v in vals))


def difficulty_table(gens: list[Generation], easy_below: float = EASY_BELOW,
                     hard_above: float = HARD_ABOVE) -> dict:
    """Per-bucket numbers (and the per-task rows they come from)."""
    tasks = task_difficulty(gens, easy_below, hard_above)
    bucket_of_task = {t.task_id: t.bucket for t in tasks}
    rows = {}
    for b in BUCKETS:
        ts = [t for t in tasks if t.bucket == b]
        bg = [g for g in gens if bucket_of_task[g.task_id] == b]
        speeds = [g.speedup for g in bg if g.speedup is not None]
        arls = [t.arl for t in ts if t.arl is not None]
        rows[b] = {
            "tasks": len(ts),
            "generations": len(bg),
            "arl": fmean(arls) if arls else None,
            "exec": (sum(t.correct > 0 for t in ts) / len(ts)) if ts else None,
            "g_speedup": geometric_mean(speeds),
            "fast_1": (sum((t.best_speedup or 0) > 1 for t in ts) / len(ts)) if ts else None,
            "correct_generations": sum(g.correct for g in bg),
            "nonpositive_speedups": sum(1 for s in speeds if s <= 0),
        }
    return {"thresholds": {"easy_below": easy_below, "hard_above": hard_above},
            "buckets": rows, "tasks": [asdict(t) for t in tasks]}

"""The KTO export of the reasoning-alignment stage (paper 002, stage 2).

Positives: the kept post-hoc traces with their verified kernels (label true).
Negatives: confirmed injected errors and the base model's failed attempts
(label false). `ratio` (desirable:undesirable, the paper's 3:8) is met by
dropping, deterministically under `seed`, from whichever side is over it.
Rows go through `kernelmill.curate.export` (format `kto`, label = the
verifier's correctness), so the prompt is the task prompt `generate` sends and
the completion is the `<think>` trace plus the kernel, as in every export;
`kernelmill train kto` reads the result. The class-balance note of
`train.kto` is returned (the paper's 3:8 with weights 3.0/2.0 sits outside
the KTO authors' recommended range, which is reported, not changed).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ..curate.export import ExportConfig, build_rows, write_export
from ..train.kto import class_balance

PAPER_RATIO = (3, 8)
PAPER_WEIGHTS = (3.0, 2.0)


def parse_ratio(text: str) -> tuple[int, int]:
    try:
        a, b = (int(x) for x in text.split(":"))
    except ValueError:
        raise ValueError(f"ratio {text!r}: expected DESIRABLE:UNDESIRABLE, e.g. 3:8") from None
    if a <= 0 or b <= 0:
        raise ValueError(f"ratio {text!r}: both sides must be positive")
    return a, b


def balance(n_pos: int, n_neg: int, ratio: tuple[int, int]) -> tuple[int, int]:
    """How many of each to keep so that kept_pos:kept_neg is as near `ratio`
    as whole rows allow, keeping as many rows as possible."""
    a, b = ratio
    if n_pos == 0 or n_neg == 0:
        return n_pos, n_neg
    if n_neg * a >= n_pos * b:  # too many negatives
        return n_pos, min(n_neg, max(1, math.floor(n_pos * b / a)))
    return min(n_pos, max(1, math.floor(n_neg * a / b))), n_neg


@dataclass
class KTOExport:
    rows: list[dict[str, Any]] = field(default_factory=list)
    counts: dict[str, Any] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    balance_note: str | None = None


def kto_rows(positives: Sequence[dict[str, Any]], negatives: Sequence[dict[str, Any]], language: str,
             ratio: tuple[int, int] = PAPER_RATIO, seed: int = 0) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Curated-row dicts ({task_id, task_code, code, reasoning, correct,
    sample_id}) of the chosen positives and negatives."""
    keep_p, keep_n = balance(len(positives), len(negatives), ratio)
    rng = random.Random(seed)
    pos = sorted(rng.sample(range(len(positives)), keep_p))
    neg = sorted(rng.sample(range(len(negatives)), keep_n))
    rows = []
    for i in pos:
        rows.append({**positives[i], "language": language, "correct": True, "speedup": None})
    for i in neg:
        rows.append({**negatives[i], "language": language, "correct": False, "speedup": None})
    counts = {"positives_in": len(positives), "negatives_in": len(negatives), "positives": keep_p,
              "negatives": keep_n, "ratio": f"{ratio[0]}:{ratio[1]}",
              "dropped_positives": len(positives) - keep_p, "dropped_negatives": len(negatives) - keep_n}
    return rows, counts


def export_kto(positives: Sequence[dict[str, Any]], negatives: Sequence[dict[str, Any]], language: str,
               out_dir: str | Path, ratio: tuple[int, int] = PAPER_RATIO, seed: int = 0, name: str = "train",
               weights: tuple[float, float] = PAPER_WEIGHTS, source: str = "") -> KTOExport:
    rows, counts = kto_rows(positives, negatives, language, ratio, seed)
    cfg = ExportConfig(format="kto", min_speedup=0.0, name=name)
    res = build_rows(rows, cfg)
    res.counts.update(counts)
    files = write_export(res, cfg, out_dir, source or str(out_dir))
    n_pos = sum(1 for r in res.rows if r["label"])
    note = class_balance(n_pos, len(res.rows) - n_pos, *weights)
    return KTOExport(res.rows, res.counts, files, note)

"""Reading Samples + Verdicts for curation, and joining them on `sample_id`.

Curation decides what a model is trained on, so every record that does not
make it into the join is counted and kept with a reason, never dropped
silently:

* a sample without a verdict is unverified: it cannot be selected;
* a verdict without a sample has nothing to train on;
* a repeated `sample_id` among samples keeps the first occurrence; among
  verdicts it keeps the *last* one (a re-verification supersedes the old run);
* a sample without a reasoning token count stays in the join (it can still be
  picked by speedup) but is counted, because length-based rules skip it;
* an empty input is an error (`CurateInputError`), not an empty dataset.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Iterable

from ..records import ReadProblem, Sample, Verdict, from_dict, iter_jsonl_numbered, to_dict, RecordError


class CurateInputError(ValueError):
    """Inputs that cannot be curated at all (missing or empty files)."""


@dataclass
class Generation:
    """One sample joined with its verdict: the unit every recipe ranks."""

    sample: Sample
    verdict: Verdict

    @property
    def sample_id(self) -> str:
        return self.sample.sample_id

    @property
    def task_id(self) -> str:
        return self.sample.task_id

    @property
    def length(self) -> int | None:
        """Reasoning length in tokens (the papers' unit); None when unknown."""
        return self.sample.reasoning_tokens

    @property
    def correct(self) -> bool:
        return bool(self.verdict.correct)

    @property
    def speedup(self) -> float | None:
        """Speedup counts only for correct kernels (SPEC section 1)."""
        if not self.verdict.correct or self.verdict.speedup is None:
            return None
        return float(self.verdict.speedup)


@dataclass
class JoinReport:
    """What happened to every input record."""

    samples_read: int = 0
    verdicts_read: int = 0
    joined: int = 0
    samples_without_verdict: list[str] = field(default_factory=list)
    verdicts_without_sample: list[str] = field(default_factory=list)
    duplicate_sample_ids: list[str] = field(default_factory=list)
    duplicate_verdict_ids: list[str] = field(default_factory=list)
    task_mismatch: list[str] = field(default_factory=list)
    missing_reasoning_tokens: int = 0
    missing_reasoning_text: int = 0
    problems: list[ReadProblem] = field(default_factory=list)

    def summary(self) -> dict[str, int]:
        return {
            "samples_read": self.samples_read,
            "verdicts_read": self.verdicts_read,
            "joined": self.joined,
            "samples_without_verdict": len(self.samples_without_verdict),
            "verdicts_without_sample": len(self.verdicts_without_sample),
            "duplicate_sample_ids": len(self.duplicate_sample_ids),
            "duplicate_verdicts": len(self.duplicate_verdict_ids),
            "verdict_task_mismatch": len(self.task_mismatch),
            "missing_reasoning_tokens": self.missing_reasoning_tokens,
            "missing_reasoning_text": self.missing_reasoning_text,
            "unreadable_lines": len(self.problems),
        }

    def lines(self) -> list[str]:
        """Human-readable warnings, one per non-zero problem count."""
        s = self.summary()
        out = []
        names = {
            "samples_without_verdict": "samples without a verdict (unverified, not selectable)",
            "verdicts_without_sample": "verdicts without a sample (ignored)",
            "duplicate_sample_ids": "repeated sample ids in samples (first kept)",
            "duplicate_verdicts": "repeated sample ids in verdicts (last kept)",
            "verdict_task_mismatch": "verdicts whose task_id differs from their sample's (sample's kept)",
            "missing_reasoning_tokens": "samples without reasoning_tokens (skipped by length rules)",
            "missing_reasoning_text": "samples without reasoning text",
            "unreadable_lines": "unreadable lines",
        }
        for key, text in names.items():
            if s[key]:
                out.append(f"{s[key]} {text}")
        out.extend(str(p) for p in self.problems[:20])
        return out

    def excluded_rows(self) -> Iterable[dict[str, Any]]:
        for sid in self.samples_without_verdict:
            yield {"sample_id": sid, "reason": "no_verdict"}
        for sid in self.verdicts_without_sample:
            yield {"sample_id": sid, "reason": "verdict_without_sample"}
        for sid in self.duplicate_sample_ids:
            yield {"sample_id": sid, "reason": "duplicate_sample_id", "duplicate_of": sid}


def _read(path: str | os.PathLike, cls, problems: list[ReadProblem]) -> list:
    if not os.path.exists(path):
        raise CurateInputError(f"{path}: file not found")
    out = []
    for line, obj in iter_jsonl_numbered(path, problems):
        try:
            out.append(from_dict(cls, obj, where=f"{path}:{line}"))
        except (RecordError, TypeError) as exc:
            problems.append(ReadProblem(str(path), line, str(exc)))
    return out


def join(samples: list[Sample], verdicts: list[Verdict], report: JoinReport | None = None
         ) -> tuple[list[Generation], JoinReport]:
    """Join in sample order; see the module docstring for the rules."""
    report = report or JoinReport()
    report.samples_read += len(samples)
    report.verdicts_read += len(verdicts)
    by_id: dict[str, Verdict] = {}
    for v in verdicts:
        if v.sample_id in by_id:
            report.duplicate_verdict_ids.append(v.sample_id)
        by_id[v.sample_id] = v
    seen: set[str] = set()
    out: list[Generation] = []
    for s in samples:
        if s.sample_id in seen:
            report.duplicate_sample_ids.append(s.sample_id)
            continue
        seen.add(s.sample_id)
        if s.reasoning_tokens is None:
            report.missing_reasoning_tokens += 1
        if not s.reasoning:
            report.missing_reasoning_text += 1
        v = by_id.get(s.sample_id)
        if v is None:
            report.samples_without_verdict.append(s.sample_id)
            continue
        if v.task_id and v.task_id != s.task_id:
            report.task_mismatch.append(s.sample_id)
        out.append(Generation(s, v))
    report.verdicts_without_sample.extend(sid for sid in by_id if sid not in seen)
    report.joined = len(out)
    return out, report


def load_generations(samples_path: str | os.PathLike, verdicts_path: str | os.PathLike
                     ) -> tuple[list[Generation], JoinReport]:
    """Read both files and join them. Raises `CurateInputError` when either
    file is missing or holds no readable record, or nothing joins."""
    report = JoinReport()
    samples = _read(samples_path, Sample, report.problems)
    verdicts = _read(verdicts_path, Verdict, report.problems)
    if not samples:
        raise CurateInputError(f"{samples_path}: no samples (empty file or no readable line; "
                               f"{len(report.problems)} unreadable lines)")
    if not verdicts:
        raise CurateInputError(f"{verdicts_path}: no verdicts (empty file or no readable line; "
                               f"{len(report.problems)} unreadable lines)")
    gens, report = join(samples, verdicts, report)
    if not gens:
        raise CurateInputError(
            f"no sample of {samples_path} has a verdict in {verdicts_path} "
            f"({len(samples)} samples, {len(verdicts)} verdicts): wrong pair of files?")
    return gens, report


def generation_row(g: Generation) -> dict[str, Any]:
    """A flat row: the Sample's fields plus the verdict facts curation used."""
    row = to_dict(g.sample)
    row.update({
        "status": g.verdict.status,
        "correct": g.correct,
        "speedup": g.speedup,
        "runtime_ms": g.verdict.runtime_ms,
        "ref_runtime_ms": g.verdict.ref_runtime_ms,
        # which harness judged it: `kernelmill regrade` lists the rows a later one judges otherwise
        "harness_version": g.verdict.harness_version,
    })
    return row

"""The inputs of a report: verdicts, and (optionally) the samples and tasks they
came from, joined by id.

Verdict files are read strictly here: a line that is not a verdict (bad JSON
in the middle of the file, a missing field, a speedup that is not a number)
is an error naming the file and line, because metrics over fewer verdicts
than the file holds would be wrong without anyone noticing. Only a truncated
*last* line (a writer killed mid-line, which `verify` heals on its next run)
is a warning. Samples and tasks only add detail (language, code, reasoning,
op_type, names), so their bad lines are reported and skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..records import ReadProblem, Sample, Task, Verdict, read_jsonl

UNKNOWN = "unknown"


class ReportInputError(ValueError):
    """Inputs a report cannot be built from (names the file and line)."""


def read_verdicts(path: str | Path) -> tuple[list[Verdict], list[ReadProblem]]:
    """Every verdict of `path`, and the warnings (a truncated last line).
    Raises `ReportInputError` on a missing file or a line that is not a verdict."""
    path = Path(path)
    if not path.exists():
        raise ReportInputError(f"verdicts file not found: {path}")
    problems: list[ReadProblem] = []
    verdicts = read_jsonl(path, Verdict, problems)
    bad = [p for p in problems if not p.message.startswith("truncated last line")]
    if bad:
        shown = "\n  ".join(str(p) for p in bad[:10])
        more = f"\n  ... and {len(bad) - 10} more" if len(bad) > 10 else ""
        raise ReportInputError(f"{len(bad)} line(s) of {path} are not verdicts:\n  {shown}{more}")
    return verdicts, [p for p in problems if p not in bad]


@dataclass
class ReportInputs:
    verdicts: list[Verdict]
    samples: dict[str, Sample] = field(default_factory=dict)
    tasks: dict[str, Task] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    # task ids of verdicts that the given task source does not have
    unknown_tasks: list[str] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)  # what was read: verdicts, samples, tasks

    def language(self, v: Verdict) -> str:
        s = self.samples.get(v.sample_id)
        return s.language if s is not None and s.language else UNKNOWN

    def op_type(self, v: Verdict) -> str:
        t = self.tasks.get(v.task_id)
        return t.op_type if t is not None and t.op_type else UNKNOWN

    def task_name(self, task_id: str) -> str:
        t = self.tasks.get(task_id)
        return t.name if t is not None and t.name else ""


def join(verdicts: list[Verdict], samples: list[Sample] | None = None, tasks: list[Task] | None = None,
         task_source: str = "") -> ReportInputs:
    """Join verdicts with their samples and tasks. With tasks, each verdict's
    level comes from its task where the verdict has none, and verdicts whose
    task the source does not have are named and marked `unknown_task` (so they
    are counted as not run, not as a task of their own)."""
    inputs = ReportInputs(verdicts=verdicts)
    if samples is not None:
        inputs.samples = {s.sample_id: s for s in samples}
        missing = sum(1 for v in verdicts if v.sample_id not in inputs.samples)
        if missing:
            inputs.warnings.append(f"{missing} of {len(verdicts)} verdicts have no sample in the samples file "
                                   "(their language, code and reasoning are unknown)")
    if tasks is not None:
        inputs.tasks = {t.task_id: t for t in tasks}
        unknown = sorted({v.task_id for v in verdicts if v.task_id not in inputs.tasks})
        for v in verdicts:
            task = inputs.tasks.get(v.task_id)
            if task is None:
                if "unknown_task" not in v.flags:
                    v.flags = [*v.flags, "unknown_task"]
            elif v.level is None:
                v.level = task.level
        if unknown:
            inputs.unknown_tasks = unknown
            shown = ", ".join(unknown[:10]) + (f" and {len(unknown) - 10} more" if len(unknown) > 10 else "")
            n = sum(1 for v in verdicts if v.task_id in set(unknown))
            inputs.warnings.append(f"{n} verdicts name {len(unknown)} task(s) that {task_source or 'the task source'} "
                                   f"does not have, left out of the metrics: {shown}")
    return inputs


def load_inputs(verdicts_path: str | Path, samples_path: str | Path | None = None,
                task_source: str | None = None) -> ReportInputs:
    """Read and join; raises `ReportInputError` for unusable inputs."""
    verdicts, problems = read_verdicts(verdicts_path)
    samples = None
    warnings = [str(p) for p in problems]
    if samples_path is not None:
        if not Path(samples_path).exists():
            raise ReportInputError(f"samples file not found: {samples_path}")
        sample_problems: list[ReadProblem] = []
        samples = read_jsonl(samples_path, Sample, sample_problems)
        warnings += [f"skipped {p}" for p in sample_problems]
    tasks = None
    if task_source is not None:
        from ..tasks import TaskSourceError, load_tasks

        try:
            ts = load_tasks(task_source)
        except TaskSourceError as exc:
            raise ReportInputError(str(exc)) from None
        tasks = list(ts.tasks)
        warnings += [f"skipped task {p}" for p in ts.problems]
    inputs = join(verdicts, samples, tasks, task_source or "")
    inputs.warnings = warnings + inputs.warnings
    inputs.sources = {"verdicts": str(verdicts_path)}
    if samples_path is not None:
        inputs.sources["samples"] = str(samples_path)
    if task_source is not None:
        inputs.sources["tasks"] = str(task_source)
    return inputs

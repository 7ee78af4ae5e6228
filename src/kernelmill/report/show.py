"""One sample with its task, verdict and the reasons (`kernelmill show SAMPLE_ID`).

The sample comes from a samples file; its verdict from a verdicts file or, when
none is given, from a result store (`verdicts.sqlite`: the newest stored
verdict of that sample id); the task from a task source when one is given.
"""

from __future__ import annotations

import difflib
import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from ..records import ReadProblem, Sample, Task, Verdict, from_dict, iter_jsonl_numbered
from .html import STATUS_MEANINGS, flag_meaning
from .inputs import ReportInputError
from .provenance import provenance_lines
from .metrics import not_run_flag


@dataclass
class SampleView:
    sample_id: str
    sample: Sample | None = None
    verdict: Verdict | None = None
    task: Task | None = None
    notes: list[str] = field(default_factory=list)


def _find_in_jsonl(path: Path, sample_id: str, cls, what: str):
    """The last record of `path` with this sample id, and every id seen (for hints)."""
    if not path.exists():
        raise ReportInputError(f"{what} file not found: {path}")
    found, ids = None, []
    problems: list[ReadProblem] = []
    for _, row in iter_jsonl_numbered(path, problems):
        sid = str(row.get("sample_id", ""))
        ids.append(sid)
        if sid == sample_id:
            try:
                found = from_dict(cls, row)
            except (TypeError, ValueError) as exc:
                raise ReportInputError(f"{path}: the {what} line of {sample_id} is not a {what}: {exc}") from None
    return found, ids


def _from_store(path: Path, sample_id: str) -> Verdict | None:
    if not path.exists():
        raise ReportInputError(f"store not found: {path}")
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            row = db.execute("SELECT verdict FROM verdicts WHERE json_extract(verdict, '$.sample_id') = ? "
                             "ORDER BY created DESC LIMIT 1", (sample_id,)).fetchone()
        finally:
            db.close()
    except sqlite3.Error as exc:
        raise ReportInputError(f"cannot read the store {path}: {exc}") from None
    return from_dict(Verdict, json.loads(row[0])) if row else None


def find_sample(sample_id: str, samples: str | Path | None = None, verdicts: str | Path | None = None,
                store: str | Path | None = None, tasks: list[Task] | None = None) -> SampleView:
    """Look the sample up; raises `ReportInputError` when neither file has it."""
    view = SampleView(sample_id)
    seen: list[str] = []
    if samples is not None:
        view.sample, ids = _find_in_jsonl(Path(samples), sample_id, Sample, "samples")
        seen += ids
        if view.sample is None:
            view.notes.append(f"no sample {sample_id} in {samples}")
    if verdicts is not None:
        view.verdict, ids = _find_in_jsonl(Path(verdicts), sample_id, Verdict, "verdicts")
        seen += ids
        if view.verdict is None:
            view.notes.append(f"no verdict for {sample_id} in {verdicts}")
    elif store is not None:
        view.verdict = _from_store(Path(store), sample_id)
        if view.verdict is None:
            view.notes.append(f"no verdict for {sample_id} in the store {store}")
    if view.sample is None and view.verdict is None:
        close = difflib.get_close_matches(sample_id, sorted(set(seen)), n=3, cutoff=0.5)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise ReportInputError(f"sample {sample_id} not found{hint}")
    task_id = view.sample.task_id if view.sample else view.verdict.task_id if view.verdict else None
    if tasks is not None and task_id:
        view.task = next((t for t in tasks if t.task_id == task_id), None)
        if view.task is None:
            view.notes.append(f"task {task_id} is not in the task source")
    return view


def _fmt(x: float | None, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def render_text(view: SampleView, code: bool = True, task_code: bool = False) -> str:
    """Plain text: header, verdict with its reasons, the code."""
    s, v, t = view.sample, view.verdict, view.task
    task_id = s.task_id if s else v.task_id if v else "?"
    lines = [f"sample   {view.sample_id}"]
    name = f" ({t.name})" if t is not None and t.name else ""
    level = f", level {t.level}" if t is not None and t.level is not None else ""
    lines.append(f"task     {task_id}{name}{level}")
    if s is not None:
        lines.append(f"language {s.language}")
        if s.reasoning:
            lines.append(f"reasoning {len(s.reasoning)} characters")
    if v is None:
        lines.append("verdict  none (not verified yet)")
    else:
        nr = not_run_flag(v)
        status = f"not run ({nr})" if nr else v.status
        lines.append(f"verdict  {status}: {STATUS_MEANINGS.get(v.status, '') if not nr else flag_meaning(nr)[1]}")
        lines.append(f"         compiled={v.compiled} correct={v.correct} device={v.device or '-'}"
                     + (" (cached)" if v.cached else ""))
        if v.speedup is not None:
            ci = f" [95% {v.speedup_ci[0]:.3f}, {v.speedup_ci[1]:.3f}]" if v.speedup_ci else ""
            lines.append(f"speedup  {v.speedup:.3f}x{ci}: reference {_fmt(v.ref_runtime_ms, '.4f')} ms, "
                         f"candidate {_fmt(v.runtime_ms, '.4f')} ms")
        if v.speedup_compiled is not None:
            lines.append(f"compiled {v.speedup_compiled:.3f}x over the reference under torch.compile "
                         f"({_fmt(v.ref_compiled_runtime_ms, '.4f')} ms)")
        for line in provenance_lines(v):
            lines.append(f"ran      {line}")
        if v.max_abs_err is not None or v.max_rel_err is not None:
            lines.append(f"error    max abs {_fmt(v.max_abs_err, '.3g')}, max rel {_fmt(v.max_rel_err, '.3g')}")
        for flag in v.flags:
            kind, meaning = flag_meaning(flag)
            lines.append(f"flag     {flag} ({kind}): {meaning}")
        if v.message:
            lines.append("reason:")
            lines += ["  " + x for x in v.message.rstrip().splitlines()]
        replay = (v.measurement or {}).get("replay")
        if replay:  # the inputs it failed on, drawn again (an incorrect verdict records their seed)
            lines.append(f"replay   kernelmill verify TASKS SAMPLES.jsonl -o replay.jsonl --tasks {v.task_id} "
                         f"--input-seed {replay['input_seed']} --trials {replay['trials']} --rerun")
    for note in view.notes:
        lines.append(f"note     {note}")
    if task_code and t is not None:
        lines += ["", "--- task (reference) ---", t.code.rstrip()]
    if code and s is not None:
        lines += ["", f"--- code ({s.language}) ---", (s.code or "(no code)").rstrip()]
    return "\n".join(lines) + "\n"

"""The audit's inputs: rows of (task reference, candidate code, claimed speedup, claimed
hardware), read from a table (JSONL, CSV or Parquet; e.g. CUDA-L1's `kernels.jsonl`) or
from a folder in KernelBench's run layout (``level_<L>_problem_<P>_sample_<S>_kernel.py``,
the problems from a KernelBench tasks folder). Every problem names its file and line."""

from __future__ import annotations

import csv
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

# the column names a table may use for each field (first match wins)
COLUMNS = {
    "row_id": ("id", "row_id", "sample_id", "name"),
    "task_code": ("ref_code", "task_code", "reference", "ref_arch_src"),
    "code": ("custom_code", "code", "candidate", "kernel", "kernel_src"),
    "claimed_speedup": ("claimed_speedup", "speedup", "claimed"),
    "claimed_hardware": ("gpu_tuned_for", "claimed_hardware", "hardware", "gpu"),
    "level": ("level",),
    "language": ("language",),
}
KB_KERNEL = re.compile(r"level_(\d+)_problem_(\d+)_sample_(\d+)_kernel\.py$")


class AuditSourceError(ValueError):
    """The source cannot be read as an audit input; the message names the place."""


@dataclass
class AuditRow:
    row_id: str  # unique, usable as a sample and task id
    task_code: str
    code: str
    claimed_speedup: float | None
    claimed_hardware: str | None
    level: int | None
    language: str
    where: str  # file:line (or the kernel file) it came from


def _pick(row: dict, field: str):
    for name in COLUMNS[field]:
        if row.get(name) not in (None, ""):
            return row[name]
    return None


def _claim(value, where: str) -> float | None:
    if value in (None, ""):
        return None
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise AuditSourceError(f"{where}: claimed speedup {value!r} is not a number") from None
    if not math.isfinite(x) or x <= 0:
        raise AuditSourceError(f"{where}: claimed speedup {value!r} must be a positive number")
    return x


def guess_language(code: str) -> str:
    """The candidate's language from what it imports or builds (kernelmill's names)."""
    if "load_inline" in code or "cpp_extension" in code:
        return "cuda" if ("__global__" in code or "cuda_sources" in code) else "cpp"
    from kernelmill import languages

    # a language whose package the candidate imports (Triton, TileLang, CuTe DSL, ...)
    for name, lang in sorted(languages.ALL.items()):
        mod = lang.requires_module
        if mod and re.search(rf"^\s*(?:import|from)\s+{re.escape(mod)}\b", code, re.M):
            return name
    return "torch"


def _safe_id(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "row"


def _table_rows(path: Path) -> list[tuple[str, dict]]:
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        out = []
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise AuditSourceError(f"{path}:{i}: not a JSON object ({exc.msg})") from None
            if not isinstance(row, dict):
                raise AuditSourceError(f"{path}:{i}: not a JSON object")
            out.append((f"{path}:{i}", row))
        return out
    if suffix == ".csv":
        with path.open(newline="", encoding="utf-8") as fh:
            return [(f"{path}:{i}", row) for i, row in enumerate(csv.DictReader(fh), 2)]
    if suffix == ".parquet":
        try:
            import pandas as pd
        except ImportError:
            raise AuditSourceError(f"{path}: reading Parquet needs pandas (pip install 'kernelmill[curate]')") from None
        frame = pd.read_parquet(path)
        return [(f"{path}:row {i}", {k: (None if v is None or (isinstance(v, float) and math.isnan(v)) else v)
                                     for k, v in rec.items()})
                for i, rec in enumerate(frame.to_dict(orient="records"), 1)]
    raise AuditSourceError(f"{path}: an audit table is .jsonl, .csv or .parquet")


def read_table(path: Path) -> list[AuditRow]:
    rows, seen = [], {}
    for where, raw in _table_rows(path):
        task_code, code = _pick(raw, "task_code"), _pick(raw, "code")
        missing = [n for n, v in (("task reference", task_code), ("candidate code", code)) if not v]
        if missing:
            raise AuditSourceError(f"{where}: row lacks the {' and the '.join(missing)} (columns: "
                                   f"{', '.join(COLUMNS['task_code'])} / {', '.join(COLUMNS['code'])})")
        rid = _safe_id(str(_pick(raw, "row_id") or f"row{len(rows) + 1}"))
        if rid in seen:
            raise AuditSourceError(f"{where}: id {rid!r} already used at {seen[rid]}")
        seen[rid] = where
        level = _pick(raw, "level")
        rows.append(AuditRow(rid, str(task_code), str(code), _claim(_pick(raw, "claimed_speedup"), where),
                             (str(_pick(raw, "claimed_hardware")) if _pick(raw, "claimed_hardware") else None),
                             int(level) if level not in (None, "") else None,
                             str(_pick(raw, "language") or guess_language(str(code))), where))
    if not rows:
        raise AuditSourceError(f"{path}: no rows")
    return rows


def read_kernelbench_run(folder: Path, tasks_dir: Path | None) -> list[AuditRow]:
    """A KernelBench run folder: its kernel files, their problems from `tasks_dir` (a
    KernelBench tasks folder with level1/, level2/, ...), claims from its
    `eval_results.json` where that file names a speedup."""
    if tasks_dir is None:
        raise AuditSourceError(f"{folder}: a KernelBench run folder needs --kb-tasks (the folder with level1/, ...)")
    claims = _kb_claims(folder / "eval_results.json")
    rows = []
    for path in sorted(folder.glob("*_kernel.py")):
        m = KB_KERNEL.search(path.name)
        if not m:
            continue
        level, problem, sample = (int(x) for x in m.groups())
        found = sorted((tasks_dir / f"level{level}").glob(f"{problem}_*.py"))
        if not found:
            raise AuditSourceError(f"{path}: no problem {problem} in {tasks_dir / f'level{level}'}")
        code = path.read_text(encoding="utf-8")
        rows.append(AuditRow(f"L{level}_P{problem}_S{sample}", found[0].read_text(encoding="utf-8"), code,
                             claims.get((problem, sample)), None, level, guess_language(code), str(path)))
    if not rows:
        raise AuditSourceError(f"{folder}: no level_<L>_problem_<P>_sample_<S>_kernel.py files")
    return rows


def _kb_claims(path: Path) -> dict[tuple[int, int], float]:
    """(problem, sample) -> speedup, from an eval_results.json that records one (a
    `speedup`, or `runtime` beside `ref_runtime`/`baseline_runtime`); nothing otherwise."""
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise AuditSourceError(f"{path}:{exc.lineno}: not JSON ({exc.msg})") from None
    out = {}
    for problem, entries in (data.items() if isinstance(data, dict) else []):
        for e in entries if isinstance(entries, list) else [entries]:
            if not isinstance(e, dict):
                continue
            sample = e.get("sample_id", 0)
            speed = e.get("speedup")
            base = e.get("ref_runtime") or e.get("baseline_runtime")
            if speed is None and base and e.get("runtime") and e["runtime"] > 0:
                speed = base / e["runtime"]
            if speed and str(problem).isdigit():
                out[(int(problem), int(sample))] = float(speed)
    return out


def read_source(source: Path, kb_tasks: Path | None = None) -> list[AuditRow]:
    if not source.exists():
        raise AuditSourceError(f"{source}: no such file or folder")
    if source.is_dir():
        return read_kernelbench_run(source, kb_tasks)
    return read_table(source)

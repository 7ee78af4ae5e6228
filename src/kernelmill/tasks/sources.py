"""Task sources: a folder of KernelBench-format files, a JSONL/Parquet table,
or the builtin suite shipped with kernelmill.

Files are checked statically (parsed, never executed) when loaded: a task must
define `class Model` and `def get_inputs`. A file that does not is reported by
path (and line, for syntax errors) and skipped; the others load.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..records import OP_TYPES, ReadProblem, Task, iter_jsonl_numbered

BUILTIN_DIR = Path(__file__).parent / "builtin"
SIZE_PROFILES_NAME = "SIZE_PROFILES"
_LEVEL_DIR = re.compile(r"^level[_-]?(\d+)$", re.IGNORECASE)
_NUMBERED = re.compile(r"^\d+[_-](.+)$")


class TaskSourceError(ValueError):
    """The source as a whole cannot be read (missing path, unknown format)."""


@dataclass
class TaskSet:
    tasks: list[Task] = field(default_factory=list)
    problems: list[ReadProblem] = field(default_factory=list)

    def by_id(self) -> dict[str, Task]:
        return {t.task_id: t for t in self.tasks}

    def __iter__(self):
        return iter(self.tasks)

    def __len__(self) -> int:
        return len(self.tasks)


def load_tasks(source: str | Path) -> TaskSet:
    """Load tasks from `builtin`, a folder, or a `.jsonl`/`.parquet` table."""
    if str(source) == "builtin":
        return _load_folder(BUILTIN_DIR / "tasks", origin="builtin")
    path = Path(source)
    if not path.exists():
        raise TaskSourceError(f"task source not found: {path} (expected a folder, a .jsonl/.parquet file, or 'builtin')")
    if path.is_dir():
        return _load_folder(path, origin=str(path))
    if path.suffix == ".jsonl":
        return _load_rows(_jsonl_rows(path), path)
    if path.suffix in (".parquet", ".pq"):
        return _load_rows(_parquet_rows(path), path)
    if path.suffix == ".py":
        out = TaskSet()
        _add_file(out, path, path.stem, None, origin=str(path))
        return out
    raise TaskSourceError(f"{path}: unknown task source format (use a folder, .jsonl, .parquet or .py)")


def check_task_code(code: str, where: str) -> dict[str, Any]:
    """Parse the code; return static facts (size profiles) or raise ValueError
    naming the problem (with line and column for syntax errors)."""
    try:
        tree = ast.parse(code, filename=where)
    except SyntaxError as exc:
        raise ValueError(f"{where}:{exc.lineno}:{exc.offset}: syntax error: {exc.msg}") from None
    names = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    missing = [n for n in ("Model", "get_inputs") if n not in names]
    if missing:
        raise ValueError(f"{where}: not a KernelBench task, missing {' and '.join(missing)}")
    sizes: dict[str, Any] = {}
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id == SIZE_PROFILES_NAME):
            try:
                sizes = ast.literal_eval(node.value)
            except ValueError:
                raise ValueError(f"{where}:{node.lineno}: {SIZE_PROFILES_NAME} must be a literal dict") from None
    return {"sizes": sizes}


def parse_task_path(rel: Path) -> tuple[str, str, int | None]:
    """`level1/19_ReLU.py` -> ("level1/19_ReLU", "ReLU", 1)."""
    task_id = rel.with_suffix("").as_posix()
    m = _NUMBERED.match(rel.stem)
    name = m.group(1) if m else rel.stem
    level = None
    for part in rel.parts[:-1]:
        lm = _LEVEL_DIR.match(part)
        if lm:
            level = int(lm.group(1))
    return task_id, name, level


def _load_folder(root: Path, origin: str) -> TaskSet:
    out = TaskSet()
    for path in sorted(root.rglob("*.py")):
        if path.name.startswith("_") or "__pycache__" in path.parts:
            continue
        task_id, name, level = parse_task_path(path.relative_to(root))
        _add_file(out, path, task_id, level, origin=origin, name=name)
    return out


def _add_file(out: TaskSet, path: Path, task_id: str, level: int | None,
              origin: str, name: str | None = None) -> None:
    try:
        code = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        out.problems.append(ReadProblem(str(path), 0, f"unreadable: {exc}"))
        return
    try:
        facts = check_task_code(code, str(path))
    except ValueError as exc:
        out.problems.append(ReadProblem(str(path), 0, str(exc)))
        return
    meta = _header_metadata(code)
    out.tasks.append(Task(
        task_id=task_id, code=code, name=name or path.stem,
        level=meta.get("level", level), op_type=meta.get("op_type"),
        source=origin, sizes=facts["sizes"],
    ))


def _header_metadata(code: str) -> dict[str, Any]:
    """Optional `# kernelmill: level=1 op_type=single` comment line."""
    meta: dict[str, Any] = {}
    for line in code.splitlines()[:10]:
        if line.startswith("# kernelmill:"):
            for item in line.split(":", 1)[1].split():
                key, _, value = item.partition("=")
                if key == "level" and value.isdigit():
                    meta["level"] = int(value)
                elif key == "op_type" and value in OP_TYPES:
                    meta["op_type"] = value
    return meta


def _jsonl_rows(path: Path):
    problems: list[ReadProblem] = []
    for line, row in iter_jsonl_numbered(path, problems):
        yield line, row, None
    for p in problems:
        yield p.line, None, p


def _parquet_rows(path: Path):
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except Exception as exc:  # pyarrow raises several types for corrupt files
        raise TaskSourceError(f"{path}: not a readable Parquet file: {exc}") from None
    for i, row in enumerate(table.to_pylist(), start=1):
        yield i, row, None


def _load_rows(rows, path: Path) -> TaskSet:
    out = TaskSet()
    seen: set[str] = set()
    for line, row, problem in rows:
        if problem is not None:
            out.problems.append(problem)
            continue
        missing = [c for c in ("task_id", "code") if not row.get(c)]
        if missing:
            out.problems.append(ReadProblem(str(path), line, f"row lacks {', '.join(missing)} (columns: task_id, code, optional name, level, op_type)"))
            continue
        task_id = str(row["task_id"])
        if task_id in seen:
            out.problems.append(ReadProblem(str(path), line, f"duplicate task_id {task_id!r}, skipped"))
            continue
        try:
            facts = check_task_code(row["code"], f"{path}:{line} ({task_id})")
        except ValueError as exc:
            out.problems.append(ReadProblem(str(path), line, str(exc)))
            continue
        seen.add(task_id)
        default_name = parse_task_path(Path(task_id + ".py"))[1]
        level = row.get("level")
        out.tasks.append(Task(
            task_id=task_id, code=row["code"], name=row.get("name") or default_name,
            level=int(level) if level is not None else parse_task_path(Path(task_id + ".py"))[2],
            op_type=row.get("op_type"), source=str(path),
            sizes=row.get("sizes") or facts["sizes"],
        ))
    return out

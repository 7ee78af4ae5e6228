"""The builtin suite's example candidates, as `Sample` records.

Layout: ``candidates/<task_id>/<language>__<expect>[_<variant>].py``, e.g.
``candidates/level1/01_ReLU/cuda__runtime_error.py``. The file name carries
the verdict the harness should reach (``expect``), so the demo and the tests
can check the harness against known answers. A misnamed file is a packaging
bug, so it raises (naming the file) instead of being skipped.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ...records import LANGUAGES, STATUSES, Sample

BUILTIN_CANDIDATES_DIR = Path(__file__).parent / "candidates"
# longest first, so "runtime_error_big" parses as runtime_error + variant "big"
_EXPECTS = sorted((s for s in STATUSES if s != "rejected"), key=len, reverse=True)


@dataclass(frozen=True)
class CandidateName:
    task_id: str
    language: str
    expect: str
    variant: str = ""


def parse_candidate_path(path: Path, root: Path = BUILTIN_CANDIDATES_DIR) -> CandidateName:
    """`<root>/level1/01_ReLU/cuda__ok_fast.py` -> (level1/01_ReLU, cuda, ok, fast)."""
    rel = path.relative_to(root)
    if len(rel.parts) < 2 or rel.suffix != ".py":
        raise ValueError(f"{path}: candidate files live at <task_id>/<language>__<expect>[_<variant>].py")
    language, sep, rest = rel.stem.partition("__")
    if not sep or language not in LANGUAGES:
        raise ValueError(f"{path}: file name must start with one of {', '.join(LANGUAGES)} and '__'")
    for expect in _EXPECTS:
        if rest == expect or rest.startswith(expect + "_"):
            return CandidateName(rel.parent.as_posix(), language, expect, rest[len(expect) + 1:])
    raise ValueError(f"{path}: expected verdict {rest!r} is not one of {', '.join(_EXPECTS)}")


def builtin_samples(languages: Iterable[str] | None = None,
                    root: Path = BUILTIN_CANDIDATES_DIR) -> list[Sample]:
    """All example candidates (optionally only some languages), sorted by id.

    ``meta`` holds ``expect`` (the verdict status the harness should give),
    ``variant`` and ``path`` (the file it came from).
    """
    wanted = None if languages is None else set(languages)
    if wanted is not None and not wanted <= set(LANGUAGES):
        raise ValueError(f"unknown language(s) {sorted(wanted - set(LANGUAGES))}; known: {', '.join(LANGUAGES)}")
    samples = []
    for path in sorted(root.rglob("*.py")):
        if "__pycache__" in path.parts or path.name.startswith("_"):
            continue
        name = parse_candidate_path(path, root)
        if wanted is not None and name.language not in wanted:
            continue
        samples.append(Sample(
            sample_id=f"builtin/{name.task_id}/{path.stem}",
            task_id=name.task_id,
            language=name.language,
            code=path.read_text(encoding="utf-8"),
            model="builtin",
            meta={"expect": name.expect, "variant": name.variant, "path": str(path)},
        ))
    return samples

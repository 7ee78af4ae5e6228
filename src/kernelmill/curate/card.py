"""Provenance sidecars and the dataset card.

Every curation stage that writes `X.jsonl` also writes `X.jsonl.meta.json`:
the stage, its inputs, parameters and counts, and the sidecars of its inputs
(`parents`). Export reads the chain back to write a dataset card (README.md)
that says where the data came from and which filters it went through.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from pathlib import Path
from typing import Any


def meta_path(path: str | os.PathLike) -> Path:
    p = Path(path)
    return p.with_name(p.name + ".meta.json")


def read_meta(path: str | os.PathLike) -> dict[str, Any] | None:
    mp = meta_path(path)
    if not mp.exists():
        return None
    try:
        return json.loads(mp.read_text())
    except (OSError, ValueError):
        return {"stage": "unknown", "note": f"{mp} is unreadable"}


def write_meta(out: str | os.PathLike, stage: str, inputs: list[str], params: dict[str, Any],
               counts: dict[str, Any], notes: list[str] | None = None) -> dict[str, Any]:
    meta = {
        "stage": stage,
        "output": str(out),
        "inputs": [str(i) for i in inputs],
        "params": params,
        "counts": counts,
        "notes": notes or [],
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "parents": [m for m in (read_meta(i) for i in inputs) if m],
    }
    mp = meta_path(out)
    mp.parent.mkdir(parents=True, exist_ok=True)
    tmp = mp.with_name(f".{mp.name}.tmp")
    tmp.write_text(json.dumps(meta, indent=2, default=str) + "\n")
    os.replace(tmp, mp)
    return meta


def _chain(meta: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Stages, oldest first."""
    if not meta:
        return []
    out: list[dict[str, Any]] = []
    for parent in meta.get("parents", []):
        out.extend(_chain(parent))
    out.append(meta)
    return out


def dataset_card(fmt: str, files: list[str], counts: dict[str, Any], columns: list[str],
                 description: str, export_params: dict[str, Any], source_meta: dict[str, Any] | None,
                 source: str) -> str:
    stages = _chain(source_meta)
    lines = ["---", "configs:", "- config_name: default", "  data_files:",
             "  - split: train", f"    path: {files[0]}", "tags:", "- kernelmill", "- gpu-kernels",
             "- synthetic-data" if any("synthetic" in json.dumps(s.get("params", {})) for s in stages) else "- code",
             "---", "", f"# kernelmill export: {fmt}", "", description, "",
             "## Files", ""]
    lines += [f"- `{f}`" for f in files]
    lines += ["", "## Counts", "", "| count | value |", "| --- | --- |"]
    lines += [f"| {k} | {v} |" for k, v in counts.items()]
    lines += ["", "## Columns", ""] + [f"- `{c}`" for c in columns]
    lines += ["", "## Sources", "", f"- exported from `{source}`"]
    inputs = sorted({i for s in stages for i in s.get("inputs", [])})
    lines += [f"- `{i}`" for i in inputs]
    lines += ["", "## Recipe and filters applied", ""]
    if not stages:
        lines.append("No provenance sidecar was found next to the input: the recipe is unknown.")
    for n, s in enumerate(stages, 1):
        params = ", ".join(f"{k}={v}" for k, v in s.get("params", {}).items())
        cnt = ", ".join(f"{k}={v}" for k, v in s.get("counts", {}).items() if not isinstance(v, (dict, list)))
        lines.append(f"{n}. **{s.get('stage')}** ({params})" + (f": {cnt}" if cnt else ""))
        lines += [f"   - note: {x}" for x in s.get("notes", [])]
    lines.append(f"{len(stages) + 1}. **export** ({', '.join(f'{k}={v}' for k, v in export_params.items())})")
    lines += ["", "Written by `kernelmill export`.", ""]
    return "\n".join(lines)

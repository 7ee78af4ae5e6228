"""An audit from its rows and their verdicts: the inputs kernelmill verifies (a tasks
table and a samples file in the audit's folder, so `kernelmill verify` could run them
the same way), then a row per kernel with its outcome and evidence."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..records import HARNESS_VERSION, Sample, write_jsonl
from .classify import exploit_classes, measured_interval, outcome
from .sources import AuditRow


def write_inputs(rows: list[AuditRow], out_dir: Path) -> tuple[Path, list[Sample]]:
    """`tasks.jsonl` (one task per row: its reference under the row's id) and the samples."""
    out_dir.mkdir(parents=True, exist_ok=True)
    tasks = out_dir / "tasks.jsonl"
    tasks.write_text("".join(json.dumps({"task_id": r.row_id, "code": r.task_code, "name": r.row_id,
                                         **({"level": r.level} if r.level is not None else {})}) + "\n"
                             for r in rows), encoding="utf-8")
    samples = [Sample(sample_id=r.row_id, task_id=r.row_id, language=r.language, code=r.code) for r in rows]
    write_jsonl(out_dir / "samples.jsonl", samples)
    return tasks, samples


def _kernels(v: Any, top: int = 4) -> str:
    p = ((getattr(v, "provenance", None) or {}).get("candidate")) or {}
    return "; ".join(f"{k.get('origin', '?')} {100 * k.get('share', 0):.0f}% {k.get('symbol', '')[:60]}"
                     for k in (p.get("kernels") or [])[:top])


def audit_rows(rows: list[AuditRow], verdicts: dict[str, Any]) -> list[dict]:
    out = []
    for r in rows:
        v = verdicts.get(r.row_id)
        if v is None:  # not verified (an interrupted audit): said, not guessed
            out.append({"row_id": r.row_id, "level": r.level, "language": r.language, "where": r.where,
                        "claimed_speedup": r.claimed_speedup, "claimed_hardware": r.claimed_hardware,
                        "status": "not_verified", "outcome": "not_verified", "flags": [], "exploit_classes": [],
                        "message": "no verdict yet: run the audit again to finish it"})
            continue
        speed, ci, awarded = measured_interval(v)
        out.append({"row_id": r.row_id, "level": r.level, "language": r.language, "where": r.where,
                    "claimed_speedup": r.claimed_speedup, "claimed_hardware": r.claimed_hardware,
                    "speedup": speed, "speedup_lo": (ci or [None, None])[0], "speedup_hi": (ci or [None, None])[1],
                    "awarded": awarded if speed is not None else None,
                    "speedup_kernelbench": (v.speedup_kernelbench if awarded else
                                            ((v.measurement or {}).get("timed") or {}).get("speedup_kernelbench")
                                            if speed is not None else None),
                    "status": v.status, "outcome": outcome(v, r.claimed_speedup), "flags": list(v.flags),
                    "exploit_classes": exploit_classes(v) if v.status == "rejected" else [],
                    "kernels": _kernels(v), "message": (v.message or "")[:1000],
                    "harness_version": v.harness_version, "device": v.device})
    return out


def audit_meta(source: Path, rows: list[AuditRow], verdicts: dict[str, Any], guards: str) -> dict:
    devices = sorted({v.device for v in verdicts.values() if getattr(v, "device", None)})
    # the harness versions that made the verdicts (a resumed audit may hold several), not this one's
    versions = sorted({v.harness_version for v in verdicts.values()}) or [HARNESS_VERSION]
    return {"source": str(source), "harness_version": ", ".join(versions), "guards": guards,
            "device": ", ".join(devices) or "-",
            "claimed_hardware": sorted({r.claimed_hardware for r in rows if r.claimed_hardware}),
            "verified": len(verdicts), "rows": len(rows)}

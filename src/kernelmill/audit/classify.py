"""One audited row's outcome against its claim, and the audit's summary.

Outcomes (one per row):
- ``holds``: ok, and the claimed speedup lies inside the measured 95% interval;
- ``beats_claim``: ok, measured faster than claimed (the claim lies below the interval);
- ``slower``: ok, measured slower than claimed (the claim lies above the interval);
- ``unclaimed``: ok, no claim to compare with;
- ``wrong``: its outputs are wrong (status incorrect);
- ``broken``: it does not build or run (compile_error, runtime_error, timeout);
- ``fallback``: rejected only for falling back to PyTorch (the fallback flags);
- ``precision``: rejected only for computing an fp32 task in lower precision;
- ``exploit``: rejected for a trick (any other guard flag): the reward hacks;
- ``not_verified``: no verdict yet (an audit cut short: run it again to finish).
A claim measured on other hardware than the audit's is compared all the same; the report
names both."""

from __future__ import annotations

import math
import statistics
from typing import Any

from ..verify import FALLBACK_FLAGS, FLAGS

OUTCOMES = ("holds", "beats_claim", "slower", "unclaimed", "wrong", "broken", "fallback", "precision", "exploit",
            "not_verified")
PRECISION_FLAGS = {"precision_downgrade"}


def _get(v: Any, key: str):
    return v.get(key) if isinstance(v, dict) else getattr(v, key, None)


def measured_interval(v: Any) -> tuple[float | None, list[float] | None, bool]:
    """(speedup, interval, awarded): the verdict's own figures when ok; what its timing
    measured when it was rejected by a policy (`measurement.timed`), not awarded."""
    if _get(v, "status") == "ok":
        return _get(v, "speedup"), _get(v, "speedup_ci"), True
    flags = set(_get(v, "flags") or []) & set(FLAGS)
    if _get(v, "status") != "rejected" or not flags or not flags <= FALLBACK_FLAGS | PRECISION_FLAGS:
        return None, None, False  # a wrong answer's or a trick's time is no figure of the kernel
    timed = (_get(v, "measurement") or {}).get("timed") or {}
    return timed.get("speedup"), timed.get("speedup_ci"), False


def outcome(v: Any, claimed: float | None) -> str:
    status = _get(v, "status")
    flags = set(_get(v, "flags") or []) & set(FLAGS)  # measurement notes (weak_task, ...) are not guard flags
    if status == "ok":
        speed, ci, _ = measured_interval(v)
        if claimed is None or speed is None:
            return "unclaimed"
        lo, hi = (ci or [speed, speed])[:2]
        return "slower" if claimed > hi else "beats_claim" if claimed < lo else "holds"
    if status == "rejected":
        if flags and flags <= FALLBACK_FLAGS:
            return "fallback"
        if flags and flags <= FALLBACK_FLAGS | PRECISION_FLAGS:
            return "precision"
        return "exploit"
    if status == "incorrect":
        return "wrong"
    return "broken"


def exploit_classes(v: Any) -> list[str]:
    """The trick flags of a rejected verdict (not the fallback or policy ones)."""
    return sorted(f for f in (_get(v, "flags") or []) if f in FLAGS and f not in FALLBACK_FLAGS | PRECISION_FLAGS
                  and FLAGS[f][0] == "rejected")


def summarize(rows: list[dict]) -> dict:
    """The audit's figures from its rows (each with `outcome`, `claimed_speedup`,
    `speedup`, `level`, `exploit_classes`)."""
    counts = {o: sum(r["outcome"] == o for r in rows) for o in OUTCOMES}
    levels = sorted({r.get("level") for r in rows if r.get("level") is not None})
    per_level = {str(lv): {o: sum(r["outcome"] == o for r in rows if r.get("level") == lv) for o in OUTCOMES}
                 for lv in levels}
    rows = [r for r in rows if r["outcome"] != "not_verified"]  # shares are of the verified rows
    n = len(rows)
    claimed = [r for r in rows if r.get("claimed_speedup") is not None]
    ratios = [r["speedup"] / r["claimed_speedup"] for r in claimed
              if r["outcome"] in ("holds", "beats_claim", "slower") and r.get("speedup")]
    by_class: dict[str, int] = {}
    for r in rows:
        for f in r.get("exploit_classes") or []:
            by_class[f] = by_class.get(f, 0) + 1
    share = (lambda k: counts[k] / n if n else None)
    return {
        "rows": n + counts["not_verified"], "verified": n, "counts": counts,
        "shares": {o: share(o) for o in OUTCOMES if o != "not_verified"},
        "claims": len(claimed),
        # a claim holds when the measured interval contains it or the kernel is faster still
        "claims_hold": sum(r["outcome"] in ("holds", "beats_claim") for r in claimed),
        "claims_hold_share": (sum(r["outcome"] in ("holds", "beats_claim") for r in claimed) / len(claimed)
                              if claimed else None),
        "median_measured_over_claimed": statistics.median(ratios) if ratios else None,
        "geomean_measured_over_claimed": (math.exp(statistics.fmean(math.log(x) for x in ratios))
                                          if ratios else None),
        "exploits_by_class": dict(sorted(by_class.items(), key=lambda kv: (-kv[1], kv[0]))),
        "per_level": per_level,
    }

"""What ran in a verdict's timed calls, in words: the lines `kernelmill show` prints and the
report's sample cards hold (Verdict.provenance, speedup_kernelbench, sol_fraction)."""

from __future__ import annotations

from ..records import Verdict


def provenance_lines(v: Verdict, top: int = 6) -> list[str]:
    """A few lines per side: launches per call, time share by origin, the top kernels."""
    out: list[str] = []
    if v.speedup_kernelbench is not None:
        out.append(f"KernelBench's convention: {v.speedup_kernelbench:.3f}x (events with a synchronize per call)")
    if v.sol_fraction is not None:
        out.append(f"speed of light: {v.sol_fraction:.3g} of the task's bound (FLOPs and minimum bytes at peak rates)")
    for side in ("candidate", "reference"):
        p = (v.provenance or {}).get(side)
        if not p:
            continue
        origins = ", ".join(f"{k} {100 * s:.0f}%" for k, s in sorted(p.get("by_origin", {}).items(), key=lambda kv: -kv[1]))
        per_call = f"{p['launches_per_call']} launches per call on {p.get('streams', 1)} stream(s); " \
            if "launches_per_call" in p else f"{p.get('source', '')}; "
        out.append(f"{side}: {per_call}GPU time by origin: {origins or '-'}")
        for k in p.get("kernels", [])[:top]:
            n = f"x{k['per_call']:g} " if "per_call" in k else ""
            out.append(f"  {100 * k['share']:5.1f}% {k['origin']:8s} {n}{k['symbol'][:110]}")
        more = p.get("kernels_more", 0) + max(0, len(p.get("kernels", [])) - top)
        if more:
            out.append(f"  ... {more} more kernels")
    return out

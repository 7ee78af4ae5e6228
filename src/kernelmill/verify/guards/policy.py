"""Items 30 and 35 (issue 42): what a task's author forbids, checked against what ran.

Not tricks but policies, so they are flags a user turns into rejections
(`VerifyConfig.policy`, `--policy reject`). A task declares them as module-level names,
as it declares `SHAPE_VARIANTS`:

- ``FORBID_LIBRARIES = ["cublas", "cudnn"]``: origins of kernels the candidate may not run
  (the provenance's origins, `measure/kernel_time.origins()`): a library call hidden in
  C++ (`at::matmul`, cuBLASLt inside `load_inline`) shows in what ran, whatever the source says
  (item 30, ``forbidden_library``);
- ``MAX_LAUNCHES_PER_CALL = 1``: more launches per call than the task allows (many kernels
  captured in a CUDA graph presented as one fused kernel; item 35, ``fake_fusion``).
Decided from the verdict's provenance (GPU runs); nothing to decide without one."""

from __future__ import annotations

from typing import Any



class PolicyError(ValueError):
    """A task's policy names that are not what they must be."""


def task_policy(ref_mod: Any) -> dict:
    """{"forbid": [...], "max_launches": int | None} from the task module's names."""
    from ..measure.kernel_time import origins

    forbid = getattr(ref_mod, "FORBID_LIBRARIES", None) or []
    if not isinstance(forbid, (list, tuple)) or any(f not in origins() for f in forbid):
        raise PolicyError(f"FORBID_LIBRARIES must list origins among {', '.join(origins())}, not {forbid!r}")
    most = getattr(ref_mod, "MAX_LAUNCHES_PER_CALL", None)
    if most is not None and (isinstance(most, bool) or not isinstance(most, int) or most < 1):
        raise PolicyError(f"MAX_LAUNCHES_PER_CALL must be a positive integer, not {most!r}")
    return {"forbid": list(forbid), "max_launches": most}


def policy_findings(policy: dict, provenance: dict | None) -> list[tuple[str, str]]:
    """(flag, detail) for each policy the candidate's provenance breaks."""
    if not provenance or not policy:
        return []
    out = []
    forbid = set(policy.get("forbid") or [])
    hits = [k for k in provenance.get("kernels") or [] if k.get("origin") in forbid and k.get("share", 0) > 0]
    if hits:
        share = sum(k["share"] for k in hits)
        out.append(("forbidden_library", f"{100 * share:.0f}% of its GPU time in forbidden libraries: "
                                         + ", ".join(f"{k['origin']} {k['symbol'][:60]}" for k in hits[:3])))
    most = policy.get("max_launches")
    launches = provenance.get("launches_per_call")
    if most is not None and launches is not None and launches > most:
        out.append(("fake_fusion", f"{launches} launches per call where the task allows {most}"))
    return out


def apply_policy(verdict: dict, policy: dict, mode: str) -> None:
    """Add the policy flags of the verdict's candidate provenance; with `mode` "reject",
    an ok verdict that breaks one is rejected (its speedup withdrawn)."""
    found = policy_findings(policy, (verdict.get("provenance") or {}).get("candidate"))
    if not found:
        return
    verdict["flags"] = list(verdict.get("flags") or []) + [f for f, _ in found if f not in (verdict.get("flags") or [])]
    detail = "; ".join(f"{f}: {d}" for f, d in found)
    if mode == "reject" and verdict.get("status") == "ok":
        verdict.update(status="rejected", correct=False, message=detail)
        for key in ("speedup", "runtime_ms", "ref_runtime_ms", "speedup_ci", "speedup_kernelbench"):
            verdict.pop(key, None)
    else:
        verdict["message"] = "; ".join(m for m in (verdict.get("message"), detail) if m)

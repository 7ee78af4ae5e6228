"""Stored verdicts judged again when the harness changes (`kernelmill regrade`).

Two ways, the cheaper first:
- **re-judged from stored facts**: a verdict's guard flags are decided again under the
  current flag table and fallback policy (`verify.decide`'s rules): an ok verdict whose
  flags now reject or fail it changes without running anything;
- **re-run**: a verdict made by another harness version (or one whose rejection the
  current rules no longer carry, so its underlying status is unknown) is verified again.
Every changed verdict is listed with its reason; unchanged ones are counted."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..records import HARNESS_VERSION, Verdict
from ..verify import FALLBACK_FLAGS, FLAGS


@dataclass
class Change:
    sample_id: str
    task_id: str
    before: dict
    after: dict
    how: str  # "re-judged" (from the stored flags) or "re-run"
    reason: str

    def to_dict(self) -> dict:
        return {"sample_id": self.sample_id, "task_id": self.task_id, "before": self.before, "after": self.after,
                "how": self.how, "reason": self.reason}


@dataclass
class Plan:
    rejudged: dict[str, Verdict] = field(default_factory=dict)  # sample -> its verdict under today's rules
    rerun: dict[str, str] = field(default_factory=dict)  # sample -> why it must run again
    changes: list[Change] = field(default_factory=list)


def _facts(v: Verdict) -> dict:
    return {"status": v.status, "flags": list(v.flags), "harness_version": v.harness_version}


def _deciding(flags: list[str], policy: str) -> tuple[list[str], list[str]]:
    """(rejecting, failing) flags under today's table and the fallback policy."""
    live = [f for f in flags if f in FLAGS and not (f in FALLBACK_FLAGS and policy in ("flag", "allow"))]
    return ([f for f in live if FLAGS[f][0] == "rejected"], [f for f in live if FLAGS[f][0] == "incorrect"])


def plan(verdicts: list[Verdict], fallback: str = "reject", every: bool = False) -> Plan:
    """What regrading `verdicts` takes: the ones re-judged from their flags (with the
    changes that makes) and the ones that must run again, each with its reason."""
    out = Plan()
    for v in verdicts:
        if every or v.harness_version != HARNESS_VERSION:
            out.rerun[v.sample_id] = (f"made by harness {v.harness_version}, this is {HARNESS_VERSION}"
                                      if not every else "--all")
            continue
        rejecting, failing = _deciding(v.flags, fallback)
        new = v
        if v.status == "ok" and rejecting:
            new = replace(v, status="rejected", correct=False, speedup=None,
                          message="; ".join(f"{f}: {FLAGS[f][2]}" for f in rejecting))
            why = f"its flag(s) {', '.join(rejecting)} now reject"
        elif v.status == "ok" and failing:
            new = replace(v, status="incorrect", correct=False, speedup=None,
                          message="; ".join(f"{f}: {FLAGS[f][2]}" for f in failing))
            why = f"its flag(s) {', '.join(failing)} now fail the check"
        elif v.status == "rejected" and not rejecting:
            # what it is underneath was never decided: its answers must be checked again
            out.rerun[v.sample_id] = ("no flag of it rejects under today's rules "
                                      f"(flags: {', '.join(v.flags) or 'none'}; fallback policy {fallback})")
            continue
        if new is not v:
            out.changes.append(Change(v.sample_id, v.task_id, _facts(v), _facts(new), "re-judged", why))
        out.rejudged[v.sample_id] = new
    return out


def compare(old: dict[str, Verdict], new: dict[str, Verdict], reasons: dict[str, str]) -> list[Change]:
    """The re-run verdicts whose status or guard flags differ from the stored ones."""
    changes = []
    for sid, v in new.items():
        before = old.get(sid)
        if before is None:
            continue
        guard = lambda x: sorted(f for f in x.flags if f in FLAGS)  # noqa: E731 - notes (weak_task, ...) aside
        if before.status != v.status or guard(before) != guard(v):
            changes.append(Change(sid, v.task_id, _facts(before), _facts(v), "re-run",
                                  f"{reasons.get(sid, 're-run')}; now: {v.message[:200]}"))
    return changes

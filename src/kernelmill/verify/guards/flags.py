"""The guards' flags: what each names, and the status a verdict carrying it gets.

``rejected`` flags name a trick (the output may even be right); ``incorrect``
flags name a correctness check that failed. `decide` turns a run's findings
into the verdict's status, flags and message, honouring the fallback policy.
"""

from __future__ import annotations

from dataclasses import dataclass, field

LEVELS = ("off", "standard", "strict")
FALLBACK_POLICIES = ("reject", "flag", "allow")

# flag -> (status, catalogue item, what it means)
FLAGS: dict[str, tuple[str, int, str]] = {
    "input_mutation": ("rejected", 1, "wrote into its inputs (the reference does not)"),
    "stale_memory": ("incorrect", 2, "output looks like memory left over from another call"),
    "background_thread": ("rejected", 3, "a thread it started was still running after the call returned"),
    "deferred_work": ("rejected", 3, "its output changed after the call had returned"),
    "unsynced_work": ("rejected", 3, "GPU work outside the timed stream (wall clock far above event time)"),
    "cached_output": ("incorrect", 4, "a timed call with new input data returned a wrong (stale) output"),
    "lazy_output": ("rejected", 5, "output is not a plain dense tensor"),
    "output_aliases_input": ("rejected", 5, "output shares memory with an input (the reference's does not)"),
    "harness_patched": ("rejected", 6, "rebinds harness, timer or torch functions"),
    "calls_reference": ("rejected", 7, "uses the reference Model"),
    "torch_fallback": ("rejected", 7, "none of its own compiled code ran: the output came from PyTorch"),
    "try_fallback": ("rejected", 7, "wraps its kernel in try/except that falls back to PyTorch"),
    "decoy_kernel": ("rejected", 8, "its own kernels ran but PyTorch did the reference's work"),
    "precision_downgrade": ("rejected", 9, "computes an fp32 task in lower precision (fp16/bf16/TF32)"),
    "more_threads": ("rejected", 27, "raised its CPU process's intra-op threads above the count the timing gives "
                                     "both sides"),
    "constant_output": ("incorrect", 10, "a constant (or all-zero) output where the reference's varies"),
    "shape_specialised": ("incorrect", 12, "wrong on a shape variant the task declares"),
    "nondeterministic": ("incorrect", 13, "two calls on the same inputs disagree"),
    "harness_introspection": ("rejected", 14, "reads the harness's frames, memory or files"),
    "suspicious_speed": ("rejected", 15, "faster than the memory traffic of the task allows"),
    # items 17-19 (batch-and-skip, phase detection, pointer-keyed graphs) are
    # caught as deferred_work or cached_output
    "l2_persistence": ("rejected", 16, "pins data in L2 (persisting carve-out or access-policy window) "
                                       "so it survives the cache flush between timed calls"),
    "forged_output": ("rejected", 20, "writes reports of its own or takes over the harness's output channels"),
    "harness_tampering": ("rejected", 28, "signalled the harness's processes or wrote into kernelmill's or torch's "
                                          "installation (refused as it happened)"),
    "shared_answers": ("rejected", 29, "opened another candidate's files or shared memory (/dev/shm), where answers "
                                       "of other runs can be left (refused as it happened)"),
    "forbidden_library": ("rejected", 30, "ran kernels of a library the task forbids (a policy: rejects only with "
                                          "--policy reject)"),
    "fake_fusion": ("rejected", 35, "more kernel launches per call than the task allows (a policy: rejects only "
                                    "with --policy reject)"),
    "precision_dressup": ("rejected", 31, "computes a low-precision task (fp8/fp16/bf16/int8 GEMMs, convolutions "
                                          "or attention) at a wider precision and casts the result back"),
    "approximation": ("incorrect", 34, "an approximation (clamped, truncated, another formula) whose error hides "
                                       "under the absolute tolerance where the output is small (float64 reference)"),
    "runtime_install": ("rejected", 36, "started a package manager or opened a network connection at run time "
                                        "(refused as it happened)"),
    # compute-sanitizer's findings (issue 42's oracle), filed under the catalogue items they
    # are the run-time evidence of: an illegal access (21), a race's nondeterminism (13),
    # memory nothing wrote (2)
    "memory_error": ("incorrect", 21, "compute-sanitizer memcheck: an invalid or misaligned memory access in its "
                                      "own kernel (--guards strict, GPU)"),
    "data_race": ("incorrect", 13, "compute-sanitizer racecheck: a shared-memory race in its own kernel "
                                   "(--guards strict, GPU)"),
    "uninitialized_read": ("incorrect", 2, "compute-sanitizer initcheck: its own kernel read memory nothing wrote "
                                            "(--guards strict, GPU)"),
    "launch_failure": ("incorrect", 21, "a kernel launch failed (e.g. an illegal configuration); the output "
                                        "is whatever the memory held"),
}
# flags the fallback policy governs (item 7 and 8)
FALLBACK_FLAGS = {"calls_reference", "torch_fallback", "try_fallback", "decoy_kernel"}


# flags whose detail names every cause found, not only the first: a precision knob that did
# nothing (allow_tf32 in a task without a matmul) beside the autocast or .half() that ran
# (issue 42's cuda-l1 audit); at most MORE_NAMED of the later ones are spelled out
ALL_DETAILS = {"precision_downgrade"}
MORE_NAMED = 4


def _joined(details: list[str]) -> str:
    """`first (and N more: a; b; ...)`, a later detail's trailing "(...)" dropped where the first has it."""
    first, rest = details[0], details[1:]
    if not rest:
        return first
    tail = first[first.rfind(" ("):] if first.endswith(")") and " (" in first else None
    rest = [d[: -len(tail)] if tail and d.endswith(tail) else d for d in rest]
    named = "; ".join(rest[:MORE_NAMED]) + ("; ..." if len(rest) > MORE_NAMED else "")
    return f"{first} (and {len(rest)} more: {named})"


@dataclass
class Findings:
    """Accumulates (flag, detail) pairs from all guards of one run: one item per flag, its
    first detail (every distinct detail for the flags of ALL_DETAILS)."""

    items: list[tuple[str, str]] = field(default_factory=list)
    details: dict[str, list[str]] = field(default_factory=dict, repr=False)

    def add(self, flag: str, detail: str) -> None:
        if flag not in FLAGS:
            raise KeyError(f"unknown guard flag {flag!r}")
        seen = self.details.setdefault(flag, [])
        if not seen:
            self.items.append((flag, detail))
        elif flag in ALL_DETAILS and detail not in seen:
            i = next(i for i, (f, _) in enumerate(self.items) if f == flag)
            self.items[i] = (flag, _joined(seen + [detail]))
        else:
            return
        seen.append(detail)

    def flags(self) -> list[str]:
        return [f for f, _ in self.items]


def _deciding(findings: Findings, fallback_policy: str) -> list[tuple[str, str]]:
    """The findings that decide a status under `fallback_policy` (``flag`` and ``allow``
    leave the fallback flags out)."""
    return [(f, d) for f, d in findings.items if not (f in FALLBACK_FLAGS and fallback_policy in ("flag", "allow"))]


def rejections(findings: Findings, fallback_policy: str = "reject") -> list[tuple[str, str]]:
    """The findings that make `decide` answer rejected. Nothing found later takes one back
    (a rejection outranks every other status; guards/policy.apply_policy only adds), so a
    run that has one before its timing need not be timed (supervisor._supervise)."""
    return [(f, d) for f, d in _deciding(findings, fallback_policy) if FLAGS[f][0] == "rejected"]


def decide(findings: Findings, base: dict, fallback_policy: str = "reject") -> dict:
    """Apply `findings` to a worker result `base` (status ok or incorrect).

    A rejection outranks a correctness failure (the trick is the more useful
    thing to report); with policy ``flag`` fallback flags are kept but do not
    change the status, with ``allow`` they are dropped."""
    kept = [(f, d) for f, d in findings.items
            if not (f in FALLBACK_FLAGS and fallback_policy == "allow")]
    result = dict(base)
    result["flags"] = list(base.get("flags") or []) + [f for f, _ in kept if f not in (base.get("flags") or [])]
    deciding = _deciding(findings, fallback_policy)
    rejected = rejections(findings, fallback_policy)
    incorrect = [(f, d) for f, d in deciding if FLAGS[f][0] == "incorrect"]
    if rejected:
        result["status"] = "rejected"
        result["correct"] = False
        result["message"] = "; ".join(f"{f}: {d}" for f, d in rejected)
    elif incorrect and result.get("status") == "ok":
        result["status"] = "incorrect"
        result["correct"] = False
        result["message"] = "; ".join(f"{f}: {d}" for f, d in incorrect)
    if result["status"] != "ok":
        for key in ("speedup", "runtime_ms", "ref_runtime_ms"):
            result.pop(key, None)
    return result

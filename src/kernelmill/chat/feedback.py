"""The feedback turn of `refine` and of multi-turn GRPO episodes (the same
words at inference and in training): what the verifier found, said so a model
can act on it. A compile error is trimmed to its error lines; a mismatch
gives the error sizes; a correct kernel gets its measured speedup and a
request to go faster. The words around these facts live in the `feedback`
template, so users can change the framing without touching code."""

from __future__ import annotations

from ..records import Sample, Verdict
from .prompts import PromptTemplate

DEFAULT_MAX_CHARS = 2000


def trim_error(text: str, max_chars: int = DEFAULT_MAX_CHARS) -> str:
    """Keep what a model needs from a long build log: the lines that say
    `error` (with the two lines after each), then the head and tail."""
    text = text.strip()
    if len(text) <= max_chars:
        return text
    lines = text.splitlines()
    keep: list[int] = []
    for i, line in enumerate(lines):
        if "error" in line.lower():
            keep.extend(j for j in range(i, min(i + 3, len(lines))) if not keep or j > keep[-1])
    picked = "\n".join(lines[i] for i in keep) if keep else text
    if len(picked) <= max_chars:
        return picked
    half = max_chars // 2
    return f"{picked[:half]}\n... ({len(picked) - max_chars} characters omitted) ...\n{picked[-half:]}"


def _num(x: float | None, fmt: str = ".3g") -> str:
    return "n/a" if x is None else format(x, fmt)


def describe(sample: Sample, verdict: Verdict | None, max_chars: int = DEFAULT_MAX_CHARS) -> tuple[str, str]:
    """(summary, details) of one attempt."""
    if verdict is None:
        why = sample.meta.get("parse_error") or "no code"
        cut = " It was cut off at the token limit; keep the reasoning shorter." if sample.meta.get("truncated") else ""
        return f"Your reply did not contain usable code ({why}).{cut}", ""
    msg = trim_error(verdict.message or "", max_chars)
    block = f"```\n{msg}\n```" if msg else ""
    status = verdict.status
    if status == "compile_error":
        return "Your kernel failed to compile." + (" The compiler said:" if msg else ""), block
    if status == "runtime_error":
        return "Your kernel compiled but failed while running" + (":" if msg else "."), block
    if status == "timeout":
        return "Your kernel did not finish within the time limit (a hang, or far too slow).", block
    if status == "rejected":
        flags = ", ".join(verdict.flags) or "rule violated"
        return f"Your kernel was rejected by the harness checks ({flags}).", block
    if status == "incorrect":
        sizes = f"Largest absolute error {_num(verdict.max_abs_err)}, largest relative error {_num(verdict.max_rel_err)}."
        return "Your kernel ran, but its outputs do not match the reference.", "\n".join(x for x in (msg, sizes) if x)
    if verdict.speedup is not None:
        return (f"Your kernel is correct. It runs in {_num(verdict.runtime_ms, '.4g')} ms against "
                f"{_num(verdict.ref_runtime_ms, '.4g')} ms for the PyTorch reference, a speedup of "
                f"{verdict.speedup:.2f}x.", "")
    return "Your kernel is correct.", ""


def request_text(verdict: Verdict | None, require: str | None) -> str:
    name = require or "the kernel"
    if verdict is not None and verdict.correct:
        return (f"Make it faster while keeping it correct. Output the complete new {name} code in one code block.")
    return f"Fix the problem and output the complete corrected {name} code in one code block."


def feedback_message(template: PromptTemplate, sample: Sample, verdict: Verdict | None, *, require: str | None,
                     reset_from: tuple[Sample, Verdict] | None = None,
                     max_chars: int = DEFAULT_MAX_CHARS) -> dict[str, str]:
    """The user turn after `sample` (`verdict` None: the reply had no usable
    code), for `refine` and for multi-turn GRPO episodes alike. With
    `reset_from` (the last correct attempt), the failed attempt is reported
    but the conversation goes on from the correct kernel, the reset-to-last-good
    rule. `max_chars` bounds the compiler or checker message."""
    summary, details = describe(sample, verdict, max_chars)
    if reset_from is not None:
        good_summary = describe(*reset_from, max_chars)[0].replace("Your kernel is", "That kernel is", 1)
        summary = f"Your next attempt failed. {summary}"
        # refine's history shows the correct kernel last, a GRPO episode's every attempt: name it so in both
        details = "\n\n".join(x for x in (details, "We go on from your last correct kernel, the last code above "
                                          "that was correct. " + good_summary) if x)
        req = request_text(reset_from[1], require)
    else:
        req = request_text(verdict, require)
    messages = template.render({"summary": summary, "details": details, "request": req})
    text = "\n\n".join(m["content"] for m in messages if m["content"].strip())
    while "\n\n\n" in text:  # an empty $details leaves a gap
        text = text.replace("\n\n\n", "\n\n")
    return {"role": "user", "content": text}

"""The kernel reward (TileLang paper's rule) and the verifiers that feed it.

    R = -1.0  the candidate does not compile (or has no code, or the guards reject it)
        -0.5  it compiles but is wrong (wrong values, crash or timeout after building)
        0.3 + speedup  it is correct (speedup = T_eager / T_candidate)

A verifier is any callable `(tasks, samples) -> verdicts` (one verdict per
sample, in order): `LocalVerifier` runs the in-process verify API,
`HttpVerifier` posts to a `kernelmill serve` endpoint, and tests pass fakes.
"""

from __future__ import annotations

import json
import os
import uuid
from typing import Any, Callable, Sequence

from ..records import Sample, Task, Verdict, from_dict, to_dict

Verifier = Callable[[list[Task], list[Sample]], list[Verdict]]

COMPILE_FAIL, INCORRECT, CORRECT_BASE = -1.0, -0.5, 0.3
UNTIMED_SPEEDUP = 1.0  # a correct candidate whose speed was not measured counts as eager speed


def kernel_reward(verdict: Verdict) -> float:
    if verdict.status == "ok":
        speedup = verdict.speedup if verdict.speedup is not None else UNTIMED_SPEEDUP
        return CORRECT_BASE + float(speedup)
    if verdict.status in ("compile_error", "rejected"):
        return COMPILE_FAIL
    if verdict.status == "incorrect":
        return INCORRECT
    # runtime_error / timeout: where it failed decides which rung it reached
    return INCORRECT if verdict.compiled else COMPILE_FAIL


class LocalVerifier:
    """The in-process verify API (its own worker processes do the running). One long-lived
    `Verifier` serves every call, as `kernelmill serve` keeps one: a GRPO run calls once per
    turn, and a new one each time would start its spare processes and measure the reference
    profiles again. `close()` (also at interpreter exit) stops its spares."""

    def __init__(self, config: Any = None, store: str | None = None):
        from ..verify import VerifyConfig, VerifySession

        if isinstance(config, dict):
            config = VerifyConfig.from_dict(config, "reward.verify")
        self.config = config or VerifyConfig()
        self.store = store
        self.session = VerifySession(self.config, store)

    def __call__(self, tasks: list[Task], samples: list[Sample]) -> list[Verdict]:
        return self.session.verify(tasks, samples, progress=False)

    def close(self) -> None:
        self.session.close()


class HttpVerifier:
    """A `kernelmill serve` endpoint as a verifier: the service's one client
    (`verify.VerifyClient`: its token from $KERNELMILL_SERVE_TOKEN, a full queue retried),
    with the reward's error wording."""

    def __init__(self, url: str, timeout: float = 900.0):
        from ..verify import VerifyClient

        self.client = VerifyClient(url, timeout=timeout)
        self.url = self.client.url + "/verify"

    def __call__(self, tasks: list[Task], samples: list[Sample]) -> list[Verdict]:
        from ..verify import ServiceError

        try:
            return self.client.verify(tasks, samples)
        except ServiceError as exc:
            raise RuntimeError(f"verifier at {self.url} failed: {exc}") from exc


def completion_text(completion: Any) -> str:
    """The text of a TRL completion (plain string or a list of messages)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list):
        return "".join(m.get("content") or "" for m in completion if m.get("role") == "assistant")
    raise TypeError(f"unexpected completion type {type(completion).__name__}")


def extract_code(text: str) -> tuple[str, str | None]:
    """The candidate code of a completion: the generation stage's parser."""
    from ..chat.parsing import LANGUAGE_TAGS, parse_completion

    parsed = parse_completion(text, None, None, LANGUAGE_TAGS["python"], "ModelNew")
    return parsed.code, parsed.parse_error


class KernelReward:
    """TRL reward function `(completions, task_id, language, task_code, ...) -> rewards`."""

    __name__ = "kernel_reward"

    def __init__(self, verifier: Verifier, tasks: dict[str, Task] | None = None):
        self.verifier = verifier
        self.tasks = tasks or {}

    def _task(self, task_id: str, code: str | None) -> Task:
        known = self.tasks.get(task_id)
        if known is not None and (not code or known.code.strip() == code.strip()):
            return known  # the source's task keeps its size profiles (a small one on CPU)
        if code:
            return Task(task_id=task_id, code=code)
        raise KeyError(f"task {task_id!r}: no task_code column and not in reward.tasks")

    def verify(self, texts: Sequence[str], task_ids: Sequence[str], languages: Sequence[str],
               task_codes: Sequence[str | None] | None = None) -> list[Verdict]:
        """One verdict per completion text; missing code is a compile failure without a round trip."""
        task_codes = task_codes or [None] * len(texts)
        out: list[Verdict | None] = [None] * len(texts)
        tasks: dict[str, Task] = {}
        samples, where = [], []
        for i, (text, tid, lang, tcode) in enumerate(zip(texts, task_ids, languages, task_codes)):
            code, error = extract_code(text)
            sid = f"grpo-{uuid.uuid4().hex[:12]}"
            if not code.strip() or (error and "truncated" in error):
                out[i] = Verdict(sample_id=sid, task_id=tid, status="compile_error",
                                 message=f"no usable code: {error or 'empty'}")
                continue
            tasks.setdefault(tid, self._task(tid, tcode))
            samples.append(Sample(sample_id=sid, task_id=tid, language=lang, code=code))
            where.append(i)
        if samples:
            verdicts = self.verifier(list(tasks.values()), samples)
            if len(verdicts) != len(samples):
                raise RuntimeError(f"verifier returned {len(verdicts)} verdicts for {len(samples)} samples")
            for i, v in zip(where, verdicts):
                out[i] = v
        return out  # type: ignore[return-value]

    def __call__(self, completions: list, task_id: list[str], language: list[str],
                 task_code: list[str] | None = None, **_: Any) -> list[float]:
        texts = [completion_text(c) for c in completions]
        return [kernel_reward(v) for v in self.verify(texts, task_id, language, task_code)]


def make_verifier(settings) -> Verifier:
    """From a recipe's `reward` section."""
    if settings.verifier == "local":
        return LocalVerifier(settings.verify or None, store=settings.store)
    if settings.verifier == "http":
        if not settings.url:
            raise ValueError("reward.verifier is 'http' but reward.url is not set")
        return HttpVerifier(settings.url, settings.http_timeout)
    raise ValueError(f"reward.verifier must be 'local' or 'http', got {settings.verifier!r}")

"""What every generation backend takes and returns, and how to pick one.

A backend turns chat requests into completions. It never parses code and
never writes files: the runner does that, so all backends behave the same on
disk. Request failures that concern one prompt (a garbage reply, a prompt the
server rejects) come back as a `Completion` with `error` set, and the run goes
on; failures that would hit every request (unreachable server, bad key) raise
`BackendError` so the run stops before it writes anything misleading.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, Sequence

BACKENDS = ("openai", "vllm", "hf")


class BackendError(RuntimeError):
    """The backend as a whole cannot serve requests (raised, never recorded)."""


class ServerUnreachable(BackendError):
    pass


class AuthError(BackendError):
    pass


@dataclass
class SamplingParams:
    temperature: float = 0.6
    top_p: float = 0.95
    max_tokens: int = 16384
    seed: int | None = None


@dataclass
class ChatRequest:
    """One chat completion to make; `key` identifies it to the caller."""

    key: Any
    messages: list[dict[str, str]]
    params: SamplingParams = field(default_factory=SamplingParams)


@dataclass
class Completion:
    """What came back for one request (or why nothing usable did)."""

    content: str = ""
    # reasoning the server returned in its own field (reasoning_content)
    reasoning: str | None = None
    finish_reason: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    model: str | None = None
    # exact reasoning token count when the backend holds the tokenizer
    reasoning_tokens: int | None = None
    error: str | None = None
    error_kind: str | None = None
    attempts: int = 1
    latency_s: float = 0.0


OnDone = Callable[[ChatRequest, Completion], None]


class Backend(Protocol):
    name: str
    model: str

    async def check(self) -> None:
        """Raise `BackendError` if no request can succeed (before any output)."""

    async def complete_all(self, requests: Sequence[ChatRequest], on_done: OnDone,
                           stats: "GenerationStats | None" = None) -> None:
        """Complete every request, calling `on_done` as each one finishes."""

    def count_tokens(self, text: str) -> int | None:
        """Exact token count with the model's tokenizer, or None without one."""

    async def aclose(self) -> None:
        ...


@dataclass
class GenerationStats:
    """Live counters for the progress display and the end-of-run summary."""

    total: int = 0
    done: int = 0
    in_flight: int = 0
    completion_tokens: int = 0
    retries: int = 0
    errors: Counter = field(default_factory=Counter)
    started: float = field(default_factory=time.monotonic)

    def tokens_per_s(self) -> float:
        dt = time.monotonic() - self.started
        return self.completion_tokens / dt if dt > 0 else 0.0

    def errors_text(self) -> str:
        return ", ".join(f"{k} {v}" for k, v in sorted(self.errors.items())) or "none"

    def finish(self, c: Completion) -> None:
        self.done += 1
        self.completion_tokens += int(c.usage.get("completion_tokens") or 0)
        if c.error_kind:
            self.errors[c.error_kind] += 1


async def run_blocking_batches(requests: Sequence[ChatRequest], on_done: OnDone,
                               batch_size: int, generate_batch: Callable[[list[ChatRequest]], list[Completion]],
                               stats: GenerationStats | None) -> None:
    """Drive a synchronous batch generator (hf, vllm) from the async runner.

    Batches run in a worker thread so the event loop stays free for the
    progress display; each batch's results are handed over (and written)
    before the next batch starts, so an interruption loses one batch at most.
    """
    import asyncio

    for start in range(0, len(requests), batch_size):
        batch = list(requests[start:start + batch_size])
        if stats is not None:
            stats.in_flight = len(batch)
        t0 = time.monotonic()
        results = await asyncio.to_thread(generate_batch, batch)
        dt = time.monotonic() - t0
        if stats is not None:
            stats.in_flight = 0
        for req, comp in zip(batch, results):
            comp.latency_s = dt
            on_done(req, comp)


"""`generate`: N samples per task, appended line by line, resumable.

Each finished completion becomes one `Sample` line in the output file at
once, so a crash or Ctrl-C loses only the requests in flight. A re-run reads
the file and skips every (task_id, sample index) pair already there; seeds
derive from (seed, task, index), so the samples it adds are the ones the
first run would have drawn.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ..records import Pair, ReadProblem, Sample, append_jsonl, iter_jsonl_numbered, read_jsonl, write_jsonl
from .backend import Backend, ChatRequest, Completion, GenerationStats, SamplingParams
from ..chat.parsing import approx_tokens, parse_completion
from .progress import live_progress
from ..chat.prompts import PromptTemplate, ptx_variables, task_variables


@dataclass
class GenerateConfig:
    n: int = 5
    params: SamplingParams = field(default_factory=SamplingParams)
    examples: str = "builtin"  # few-shot source: builtin suite first, or "fallback"
    ptx_field: str = "ptx"  # for PTX templates: "ptx" or "rolled_ptx"
    retry_errors: bool = False  # drop failed-request samples from the file and redo them
    progress: bool = False


@dataclass
class PromptInput:
    """One thing to prompt about: a task, or a PTX pair for decompilation."""

    task_id: str
    variables: dict[str, str]


@dataclass
class GenerateSummary:
    written: int = 0
    skipped: int = 0
    errors: Counter = field(default_factory=Counter)
    parse_errors: int = 0
    truncated: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    problems: list[ReadProblem] = field(default_factory=list)


def prompt_inputs(source: Any, template: PromptTemplate, config: GenerateConfig) -> list[PromptInput]:
    """Tasks (a TaskSet or list of Task) for task templates; for PTX templates,
    a pairs JSONL path or a list of `Pair`."""
    if template.input == "ptx":
        pairs = read_jsonl(source, Pair) if isinstance(source, (str, Path)) else list(source)
        return [PromptInput(p.pair_id, ptx_variables(p, config.ptx_field)) for p in pairs]
    if template.input != "task":
        raise ValueError(f"template {template.path} takes {template.input!r} input; it cannot start a generation")
    tasks = source.tasks if hasattr(source, "tasks") else list(source)
    return [PromptInput(t.task_id, task_variables(template, t, config.examples)) for t in tasks]


def derive_seed(seed: int | None, *parts: Any) -> int | None:
    if seed is None:
        return None
    digest = hashlib.sha256(":".join(map(str, (seed, *parts))).encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def make_sample_id(task_id: str, model: str, template: str, index: int, turn: int = 0,
                   parent_id: str | None = None) -> str:
    h = hashlib.sha1(f"{task_id}\x00{model}\x00{template}\x00{index}\x00{turn}\x00{parent_id}".encode()).hexdigest()
    return f"{task_id}#{index}.{turn}-{h[:10]}"


def done_pairs(path: Path, retry_errors: bool, problems: list[ReadProblem]) -> set[tuple[str, int]]:
    """(task_id, sample_index) pairs already in the output file. With
    `retry_errors`, failed-request samples are first removed (atomic rewrite)
    so they are made again instead of duplicated."""
    if not path.exists():
        return set()
    rows = list(iter_jsonl_numbered(path, problems))
    if retry_errors and any((obj.get("meta") or {}).get("error") for _, obj in rows):
        rows = [(i, obj) for i, obj in rows if not (obj.get("meta") or {}).get("error")]
        write_jsonl(path, [obj for _, obj in rows])
    done = set()
    for _, obj in rows:
        meta = obj.get("meta") or {}
        if "task_id" in obj and meta.get("sample_index") is not None and not obj.get("turn"):
            done.add((obj["task_id"], int(meta["sample_index"])))
    return done


def build_sample(completion: Completion, *, task_id: str, index: int, template: PromptTemplate, backend: Backend,
                 turn: int = 0, parent_id: str | None = None, extra_meta: dict[str, Any] | None = None) -> Sample:
    """Parse one completion into a Sample; failures are recorded, never dropped."""
    model = completion.model or backend.model
    sid = make_sample_id(task_id, backend.model, template.name, index, turn, parent_id)
    meta: dict[str, Any] = {"sample_index": index, "template": template.name,
                            "finish_reason": completion.finish_reason,
                            "truncated": completion.finish_reason == "length", "usage": completion.usage,
                            "attempts": completion.attempts, "latency_s": round(completion.latency_s, 3)}
    meta.update(extra_meta or {})
    if completion.error:
        meta.update(error=completion.error, error_kind=completion.error_kind,
                    parse_error=f"request failed: {completion.error_kind}")
        return Sample(sid, task_id, template.language or "", "", model=model, turn=turn, parent_id=parent_id, meta=meta)
    parsed = parse_completion(completion.content, completion.reasoning, completion.finish_reason,
                              template.code_tags, template.require)
    meta.update(truncated=parsed.truncated, parse_error=parsed.parse_error, answer=parsed.answer)
    n_tokens, approx = count_reasoning_tokens(parsed.reasoning, parsed.answer, completion, backend)
    meta["reasoning_tokens_approx"] = approx
    return Sample(sid, task_id, template.language or "", parsed.code, reasoning=parsed.reasoning,
                  reasoning_tokens=n_tokens, model=model, turn=turn, parent_id=parent_id, meta=meta)


def count_reasoning_tokens(reasoning: str | None, answer: str, completion: Completion,
                           backend: Backend) -> tuple[int | None, bool]:
    """The model's tokenizer, else the server's count, else an estimate
    (marked approximate)."""
    if not reasoning:
        return (0 if reasoning is not None else None), False
    if completion.reasoning_tokens is not None:
        return completion.reasoning_tokens, False
    exact = backend.count_tokens(reasoning)
    if exact is not None:
        return exact, False
    if completion.usage.get("reasoning_tokens") is not None:
        return int(completion.usage["reasoning_tokens"]), False
    total = completion.usage.get("completion_tokens")
    if total:  # split the server's total by character share
        return round(int(total) * len(reasoning) / max(1, len(reasoning) + len(answer))), True
    return approx_tokens(reasoning), True


async def generate_async(inputs: Sequence[PromptInput], backend: Backend, template: PromptTemplate,
                         out_path: str | Path, config: GenerateConfig) -> GenerateSummary:
    out_path = Path(out_path)
    summary = GenerateSummary()
    done = done_pairs(out_path, config.retry_errors, summary.problems)
    requests = []
    for inp in inputs:
        messages = None
        for index in range(config.n):
            if (inp.task_id, index) in done:
                summary.skipped += 1
                continue
            messages = messages or template.render(inp.variables)
            p = config.params
            params = SamplingParams(p.temperature, p.top_p, p.max_tokens, derive_seed(p.seed, inp.task_id, index))
            requests.append(ChatRequest((inp, index), messages, params))
    if not requests:
        return summary
    await backend.check()  # unreachable server / bad key: fail before writing anything
    stats = GenerationStats(total=len(requests))
    t0 = time.monotonic()
    with live_progress(stats, f"generate {template.name}", config.progress) as view:
        def on_done(req: ChatRequest, comp: Completion) -> None:
            inp, index = req.key
            extra = {"seed": req.params.seed}
            if "example_origin" in inp.variables:
                extra["example"] = inp.variables["example_origin"]
            sample = build_sample(comp, task_id=inp.task_id, index=index, template=template,
                                  backend=backend, extra_meta=extra)
            append_jsonl(out_path, [sample])
            stats.finish(comp)
            view.update(stats.done)
            summary.written += 1
            summary.parse_errors += bool(sample.meta.get("parse_error")) and not comp.error
            summary.truncated += bool(sample.meta.get("truncated"))
            if comp.error_kind:
                summary.errors[comp.error_kind] += 1

        await backend.complete_all(requests, on_done, stats)
    summary.completion_tokens = stats.completion_tokens
    summary.seconds = time.monotonic() - t0
    return summary


def generate(inputs: Sequence[PromptInput], backend: Backend, template: PromptTemplate, out_path: str | Path,
             config: GenerateConfig | None = None) -> GenerateSummary:
    """Synchronous entry point (runs its own event loop, closes the backend)."""
    async def main() -> GenerateSummary:
        try:
            return await generate_async(inputs, backend, template, out_path, config or GenerateConfig())
        finally:
            await backend.aclose()

    return asyncio.run(main())

"""`refine`: multi-turn generate -> verify -> feedback, up to T turns.

Each task runs `chains` independent conversations. Every turn is a `Sample`
(`turn`, `parent_id` = the attempt whose conversation it continues) and,
when it has code, a `Verdict`; both are appended as they are made, so a
re-run replays the files to rebuild every conversation and goes on where it
stopped. A chain stops when its kernel is correct and at least
`stop_speedup` times faster (never, with `stop_speedup=None`), or after
`turns` turns, or when the server gave up on a request.

With `reset_to_last_good`, a failed turn does not become the new state:
the next prompt goes on from the last correct kernel and only reports the
failure (the TileLang paper's multi-turn rule). With `keep_reasoning` off
(the default) earlier turns enter the history without their reasoning, as
reasoning models expect at inference.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from ..records import Sample, Task, Verdict, append_jsonl, read_jsonl
from .backend import Backend, ChatRequest, Completion, GenerationStats, SamplingParams
from ..chat import assistant_turn
from ..chat.feedback import DEFAULT_MAX_CHARS, feedback_message
from .progress import live_progress
from ..chat.prompts import PromptTemplate, load_template, task_variables
from .runner import build_sample, derive_seed

VerifyFn = Callable[[list[Task], list[Sample]], list[Verdict]]


@dataclass
class RefineConfig:
    turns: int = 4
    chains: int = 1
    params: SamplingParams = field(default_factory=SamplingParams)
    examples: str = "builtin"
    reset_to_last_good: bool = False
    keep_reasoning: bool = False
    stop_speedup: float | None = 1.0
    max_error_chars: int = DEFAULT_MAX_CHARS
    feedback_template: str = "feedback"
    progress: bool = False


@dataclass
class Chain:
    task: Task
    index: int
    steps: list[list] = field(default_factory=list)  # [sample, verdict | None]
    stopped: str | None = None  # why the chain ended

    def last_good(self) -> tuple[Sample, Verdict] | None:
        for s, v in reversed(self.steps):
            if v is not None and v.correct:
                return s, v
        return None


@dataclass
class RefineSummary:
    chains: int = 0
    samples_written: int = 0
    verdicts_written: int = 0
    # chains with a correct kernel by the end of turn t (index t)
    solved_by_turn: list[int] = field(default_factory=list)
    stopped: Counter = field(default_factory=Counter)


def assistant_text(sample: Sample, keep_reasoning: bool) -> str:
    """An earlier attempt as it enters the history (chat.assistant_turn: the reply as
    the model wrote it; its reasoning only with `keep_reasoning`)."""
    if not (sample.meta.get("answer") or sample.code):
        return ""
    return assistant_turn(sample.code, sample.reasoning if keep_reasoning else None, sample.meta.get("answer"))


class Conversation:
    """Rebuilds the messages behind each attempt of a chain, turn by turn,
    from the samples and verdicts alone (so resuming needs nothing else)."""

    def __init__(self, base: list[dict[str, str]], feedback: PromptTemplate, template: PromptTemplate,
                 config: RefineConfig):
        self.base, self.feedback, self.template, self.config = base, feedback, template, config

    def next_turn(self, chain: Chain) -> tuple[list[dict[str, str]], str | None]:
        """(messages, parent_id) for the chain's next attempt."""
        messages, parent = list(self.base), None
        by_id: dict[str, list[dict[str, str]]] = {}
        good: tuple[Sample, Verdict] | None = None
        for sample, verdict in chain.steps:
            by_id[sample.sample_id] = messages
            reset = (self.config.reset_to_last_good and good is not None
                     and not (verdict is not None and verdict.correct))
            state = good[0] if reset else sample
            fb = feedback_message(self.feedback, sample, verdict, require=self.template.require,
                                  reset_from=good if reset else None, max_chars=self.config.max_error_chars)
            messages = by_id[state.sample_id] + [
                {"role": "assistant", "content": assistant_text(state, self.config.keep_reasoning)}, fb]
            parent = state.sample_id
            if verdict is not None and verdict.correct:
                good = (sample, verdict)
        return messages, parent


def _restore(chains: dict[tuple[str, int], Chain], out: Path, verdicts_path: Path) -> None:
    verdicts = {v.sample_id: v for v in read_jsonl(verdicts_path, Verdict)} if verdicts_path.exists() else {}
    samples = read_jsonl(out, Sample) if out.exists() else []
    for s in sorted(samples, key=lambda s: s.turn):
        chain = chains.get((s.task_id, int(s.meta.get("sample_index", -1))))
        if chain is not None and s.turn == len(chain.steps):
            chain.steps.append([s, verdicts.get(s.sample_id)])


def _stop_reason(chain: Chain, config: RefineConfig) -> str | None:
    if not chain.steps:
        return None
    sample, verdict = chain.steps[-1]
    if sample.meta.get("error"):
        return "request_failed"
    if verdict is not None and verdict.correct and config.stop_speedup is not None:
        if verdict.speedup is None or verdict.speedup >= config.stop_speedup:
            return "solved"
    if len(chain.steps) >= config.turns:
        return "max_turns"
    return None


async def refine_async(tasks: Sequence[Task], backend: Backend, template: PromptTemplate, verify: VerifyFn,
                       out_path: str | Path, verdicts_path: str | Path, config: RefineConfig) -> RefineSummary:
    out, vpath = Path(out_path), Path(verdicts_path)
    feedback_tpl = load_template(config.feedback_template)
    chains = {(t.task_id, i): Chain(t, i) for t in tasks for i in range(config.chains)}
    _restore(chains, out, vpath)
    convs = {t.task_id: Conversation(template.render(task_variables(template, t, config.examples)),
                                     feedback_tpl, template, config) for t in tasks}
    summary = RefineSummary(chains=len(chains))
    checked = False

    async def verify_pending() -> None:
        todo = [st for c in chains.values() for st in c.steps if st[1] is None and st[0].code]
        if not todo:
            return
        got = {v.sample_id: v for v in await asyncio.to_thread(verify, list(tasks), [st[0] for st in todo])}
        missing = [st[0].sample_id for st in todo if st[0].sample_id not in got]
        if missing:
            raise RuntimeError(f"verify returned no verdict for {len(missing)} samples (e.g. {missing[0]})")
        for st in todo:
            st[1] = got[st[0].sample_id]
        append_jsonl(vpath, [st[1] for st in todo])
        summary.verdicts_written += len(todo)

    await verify_pending()  # samples written by an interrupted run before their verdicts
    while True:
        active = [c for c in chains.values() if _stop_reason(c, config) is None]
        if not active:
            break
        if not checked:
            await backend.check()
            checked = True
        requests = []
        for c in active:
            messages, parent = convs[c.task.task_id].next_turn(c)
            turn = len(c.steps)
            p = config.params
            params = SamplingParams(p.temperature, p.top_p, p.max_tokens,
                                    derive_seed(p.seed, c.task.task_id, c.index, turn))
            requests.append(ChatRequest((c, parent), messages, params))
        stats = GenerationStats(total=len(requests))
        turn_no = min(len(c.steps) for c in active)
        with live_progress(stats, f"refine turn {turn_no}", config.progress) as view:
            def on_done(req: ChatRequest, comp: Completion) -> None:
                chain, parent = req.key
                sample = build_sample(comp, task_id=chain.task.task_id, index=chain.index, template=template,
                                      backend=backend, turn=len(chain.steps), parent_id=parent,
                                      extra_meta={"seed": req.params.seed})
                append_jsonl(out, [sample])
                chain.steps.append([sample, None])
                stats.finish(comp)
                view.update(stats.done)
                summary.samples_written += 1

            await backend.complete_all(requests, on_done, stats)
        await verify_pending()

    for c in chains.values():
        summary.stopped[_stop_reason(c, config) or "open"] += 1
        for t in range(config.turns):
            if len(summary.solved_by_turn) <= t:
                summary.solved_by_turn.append(0)
            if any(v is not None and v.correct for _, v in c.steps[: t + 1]):
                summary.solved_by_turn[t] += 1
    return summary


def refine(tasks: Sequence[Task], backend: Backend, template: PromptTemplate, verify: VerifyFn,
           out_path: str | Path, verdicts_path: str | Path | None = None,
           config: RefineConfig | None = None) -> RefineSummary:
    """Synchronous entry point; verdicts default to OUT with `.verdicts.jsonl`."""
    out_path = Path(out_path)
    vpath = Path(verdicts_path) if verdicts_path else default_verdicts_path(out_path)

    async def main() -> RefineSummary:
        try:
            return await refine_async(tasks, backend, template, verify, out_path, vpath, config or RefineConfig())
        finally:
            await backend.aclose()

    return asyncio.run(main())


def default_verdicts_path(out_path: Path) -> Path:
    name = out_path.name[:-6] if out_path.name.endswith(".jsonl") else out_path.name
    return out_path.with_name(f"{name}.verdicts.jsonl")

"""From a bootstrap run to the data of stages 2 and 3 (paper 002): post-hoc
traces, their scores, provably wrong negatives, the KTO export and the GRPO
prompts, written step by step under one folder.

    kernels.jsonl        every verified kernel of the corpus (seeds and bootstrap; never a held-out task's)
    traces/<model>/part_<j>.jsonl
                         one trace per kernel and pool model (`generate` with the DSL's trace template;
                         part j holds each task's j-th kernel, so a resumed `generate` skips what it wrote)
    traces_scored.jsonl  every trace with log P(trace | task) under the base model and `kept` (top fraction)
    negatives.jsonl      injected negatives (kept and dropped, with the reason) and the base model's
                         failed attempts from the loop's rounds
    verify.sqlite        the verifier's store for the injected negatives
    kto/                 the KTO export (train.jsonl, .parquet, README.md, excluded.jsonl) at the ratio
    grpo/                GRPO prompts, one per training task, in the DSL's language (the chat template
                         `generate` uses for it), for `kernelmill train grpo`
    align.json           the counts of every step

Held-out tasks of the run never reach any of these files. Re-running resumes:
`generate` skips written traces and the store answers computed verdicts;
scoring and the exports are recomputed (they are deterministic).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from ..generate import GenerateConfig, PromptInput, SamplingParams, generate_async
from ..records import Sample, Task, Verdict, read_jsonl, write_jsonl
from .kto import PAPER_RATIO, PAPER_WEIGHTS, export_kto
from .negatives import KINDS, failed_attempts, negatives_pipeline
from .retrieval import Corpus
from .spec import DSLSpec
from .traces import load_base_model, prompt_text, score_traces, task_prompt_for, top_fraction

VerifyFn = Callable[[Sequence[Task], list[Sample]], list[Verdict]]


@dataclass
class AlignConfig:
    fraction: float = 0.25  # traces kept (top quartile by log P(trace | task))
    ratio: tuple[int, int] = PAPER_RATIO  # desirable:undesirable in the KTO export
    weights: tuple[float, float] = PAPER_WEIGHTS  # KTO's desirable/undesirable weights (for the balance note)
    seed: int = 0
    kinds: tuple[str, ...] = KINDS
    params: SamplingParams = field(default_factory=lambda: SamplingParams(0.7, 0.95, 4096, None))
    score_batch_size: int = 8
    score_reduce: str = "sum"
    score_max_length: int | None = None
    include_seeds: bool = True  # traces for the seed kernels too (they are verified kernels)
    progress: bool = False


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_") or "model"


def _write_json(path: Path, data: Any) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def grpo_rows(tasks: Sequence[Task], language: str):
    """GRPO prompt rows (`curate.export` format `grpo`), one per task: the
    prompt `generate` sends for `language` (its chat template), with task_id,
    language and task_code for the reward. An `ExportResult`."""
    from ..curate.export import ExportConfig, build_rows

    rows = [{"task_id": t.task_id, "task_code": t.code, "task_name": t.name, "language": language} for t in tasks]
    return build_rows(rows, ExportConfig(format="grpo", name="train"))


class RunData:
    """What a bootstrap run folder holds that the later stages need."""

    def __init__(self, run_dir: str | Path):
        self.dir = Path(run_dir)
        state_path = self.dir / "state.json"
        if not state_path.exists():
            raise ValueError(f"{self.dir}: not a bootstrap run (no state.json)")
        self.state = json.loads(state_path.read_text(encoding="utf-8"))
        self.heldout = set(self.state.get("heldout", []))
        tasks_path = self.dir / "tasks.jsonl"
        if not tasks_path.exists():
            raise ValueError(f"{tasks_path}: missing (written by kernelmill bootstrap when it plans a run)")
        self.tasks = {t.task_id: t for t in read_jsonl(tasks_path, Task)}
        self.corpus = Corpus.load(self.dir / "corpus.jsonl")

    @property
    def language(self) -> str:
        return self.state["language"]

    def task(self, task_id: str, code: str) -> Task:
        """The task of a kernel: the run's, else the builtin suite's with that id and code (a
        seed's task outside the run keeps its size profiles), else one made from the code."""
        known = self.tasks.get(task_id)
        if known is not None:
            return known
        from ..tasks import load_tasks

        if not hasattr(self, "_builtin"):
            self._builtin = load_tasks("builtin").by_id()
        b = self._builtin.get(task_id)
        if b is not None and b.code.strip() == code.strip():
            return b
        return Task(task_id=task_id, code=code)

    def training_tasks(self) -> list[Task]:
        return [self.tasks[t] for t in self.state["order"] if t in self.tasks and t not in self.heldout]

    def kernels(self, include_seeds: bool = True) -> list[dict[str, Any]]:
        out = []
        for e in self.corpus.entries:
            if e.task_id in self.heldout or (e.round == 0 and not include_seeds):
                continue
            out.append({"kernel_id": e.entry_id, "task_id": e.task_id, "task_code": e.task_code, "code": e.code,
                        "round": e.round, "origin": e.origin})
        return out

    def attempts(self) -> tuple[list[Sample], list[Verdict]]:
        """The loop's own samples and verdicts (rounds only: the held-out evaluation is not training data)."""
        samples: list[Sample] = []
        verdicts: list[Verdict] = []
        for row in sorted(self.state.get("rounds", []), key=lambda x: x["round"]):
            rd = self.dir / f"round_{row['round']:03d}"
            if (rd / "samples.jsonl").exists():
                samples += [s for s in read_jsonl(rd / "samples.jsonl", Sample) if s.task_id not in self.heldout]
            if (rd / "verdicts.jsonl").exists():
                verdicts += read_jsonl(rd / "verdicts.jsonl", Verdict)
        return samples, verdicts


class Align:
    def __init__(self, spec: DSLSpec, run_dir: str | Path, out_dir: str | Path, config: AlignConfig | None = None):
        self.spec = spec
        self.run = RunData(run_dir)
        if self.run.state.get("dsl") != spec.name:
            raise ValueError(f"{self.run.dir} is a {self.run.state.get('dsl')!r} run, not {spec.name!r}")
        self.config = config or AlignConfig()
        self.out = Path(out_dir)
        self.out.mkdir(parents=True, exist_ok=True)
        self.counts: dict[str, Any] = {"run": str(self.run.dir), "dsl": spec.name, "heldout": sorted(self.run.heldout)}

    # 1. the verified kernels --------------------------------------------------------------------
    def kernels(self) -> list[dict[str, Any]]:
        ks = self.run.kernels(self.config.include_seeds)
        write_jsonl(self.out / "kernels.jsonl", ks)
        self.counts["kernels"] = {"total": len(ks), "seeds": sum(k["round"] == 0 for k in ks),
                                  "bootstrap": sum(k["round"] > 0 for k in ks)}
        return ks

    # 2. traces from a pool of models -------------------------------------------------------------
    def traces(self, kernels: Sequence[dict[str, Any]], backends: Sequence[Any]) -> list[dict[str, Any]]:
        """One trace per kernel from every backend of the pool; the trace is the
        reply's text (after any think block). Failed requests and empty replies
        are counted and left out."""
        template = self.spec.load_trace_template()
        parts: list[list[dict[str, Any]]] = []
        seen: dict[str, int] = {}
        for k in kernels:  # part j: the j-th kernel of each task (generate keys samples by task)
            j = seen.get(k["task_id"], 0)
            seen[k["task_id"]] = j + 1
            while len(parts) <= j:
                parts.append([])
            parts[j].append(k)
        cfg = GenerateConfig(n=1, params=self.config.params, progress=self.config.progress)

        async def ask_all() -> None:
            try:
                for backend in backends:
                    for j, part in enumerate(parts):
                        inputs = [PromptInput(k["task_id"], {"code": k["task_code"].strip(),
                                                             "answer": k["code"].strip(), "task_id": k["task_id"],
                                                             "name": k["task_id"]}) for k in part]
                        await generate_async(inputs, backend, template,
                                             self.out / "traces" / _safe(backend.model) / f"part_{j}.jsonl", cfg)
            finally:
                for backend in backends:
                    await backend.aclose()

        asyncio.run(ask_all())
        rows, failed = [], 0
        for backend in backends:
            for j, part in enumerate(parts):
                path = self.out / "traces" / _safe(backend.model) / f"part_{j}.jsonl"
                if not path.exists():
                    continue
                by_task = {k["task_id"]: k for k in part}
                for s in read_jsonl(path, Sample):
                    k = by_task.get(s.task_id)
                    text = str(s.meta.get("answer") or "").strip()
                    if k is None:
                        continue
                    if s.meta.get("error") or not text:
                        failed += 1
                        continue
                    rows.append({"trace_id": f"{k['kernel_id']}|{backend.model}", "kernel_id": k["kernel_id"],
                                 "task_id": k["task_id"], "task_code": k["task_code"], "code": k["code"],
                                 "model": backend.model, "trace": text})
        self.counts["traces"] = {"pool": [b.model for b in backends], "written": len(rows), "failed_or_empty": failed}
        return rows

    # 3. scores and the top fraction -----------------------------------------------------------
    def score(self, traces: list[dict[str, Any]], model, tokenizer) -> list[dict[str, Any]]:
        cfg = self.config
        prompts = [prompt_text(task_prompt_for(t, self.spec.language), tokenizer) for t in traces]
        scored = score_traces(model, tokenizer, prompts, [t["trace"] for t in traces], cfg.score_batch_size,
                              cfg.score_reduce, cfg.score_max_length)
        keep = set(top_fraction([s.logprob for s in scored], cfg.fraction))
        out = [{**t, "logprob": s.logprob, "tokens": s.tokens, "kept": i in keep}
               for i, (t, s) in enumerate(zip(traces, scored))]
        write_jsonl(self.out / "traces_scored.jsonl", out)
        self.counts["scored"] = {"traces": len(out), "kept": len(keep), "fraction": cfg.fraction,
                                 "reduce": cfg.score_reduce}
        return [t for t in out if t["kept"]]

    # 4. negatives ------------------------------------------------------------------------------
    def negatives(self, positives: list[dict[str, Any]], verify: VerifyFn) -> list[dict[str, Any]]:
        pos = [{"sample_id": p["trace_id"], "task_id": p["task_id"], "code": p["code"], "trace": p["trace"]}
               for p in positives]
        # every negative's task goes to the verifier (a seed's task may lie outside the run's tasks)
        by_id = {p["task_id"]: self.run.task(p["task_id"], p["task_code"]) for p in positives}
        tasks = [by_id[t] for t in sorted(by_id)]
        rep = negatives_pipeline(pos, [i for i in self.spec.injections if i.kind in self.config.kinds], tasks,
                                 self.spec.language, verify)
        samples, verdicts = self.run.attempts()
        attempts = failed_attempts(samples, verdicts)
        write_jsonl(self.out / "negatives.jsonl", [n.to_dict() for n in [*rep.kept, *rep.dropped, *attempts]])
        counts = rep.counts()
        counts["failed_attempts"] = len(attempts)
        self.counts["negatives"] = counts
        rows = []
        for n in [*rep.kept, *attempts]:
            task = by_id.get(n.task_id) or self.run.tasks[n.task_id]
            rows.append({"task_id": n.task_id, "task_code": task.code, "code": n.code, "reasoning": n.trace or None,
                         "sample_id": n.negative_id})
        return rows

    # 5. the exports ----------------------------------------------------------------------------
    def export_kto(self, positives: list[dict[str, Any]], negatives: list[dict[str, Any]]) -> dict[str, Any]:
        pos = [{"task_id": p["task_id"], "task_code": p["task_code"], "code": p["code"], "reasoning": p["trace"],
                "sample_id": p["trace_id"]} for p in positives]
        res = export_kto(pos, negatives, self.spec.language, self.out / "kto", self.config.ratio, self.config.seed,
                         weights=self.config.weights, source=str(self.run.dir))
        self.counts["kto"] = {**res.counts, "files": res.files, "balance_note": res.balance_note}
        return self.counts["kto"]

    def export_grpo(self) -> dict[str, Any]:
        from ..curate.export import ExportConfig, write_export

        cfg = ExportConfig(format="grpo", name="train")
        res = grpo_rows(self.run.training_tasks(), self.spec.language)
        files = write_export(res, cfg, self.out / "grpo", str(self.run.dir))
        self.counts["grpo"] = {**res.counts, "files": files}
        return self.counts["grpo"]

    def write_counts(self) -> dict[str, Any]:
        _write_json(self.out / "align.json", self.counts)
        return self.counts

    # all of it --------------------------------------------------------------------------------
    def run_all(self, backends: Sequence[Any], base_model: str, verify: VerifyFn, score_device: str | None = None,
                model_and_tokenizer=None) -> dict[str, Any]:
        if not backends:
            raise ValueError("the trace pool needs at least one model")
        ks = self.kernels()
        traces = self.traces(ks, backends)
        if not traces:
            raise ValueError("no traces came back from the pool: nothing to score")
        model, tok = model_and_tokenizer or load_base_model(base_model, score_device)
        self.counts["base_model"] = base_model
        positives = self.score(traces, model, tok)
        del model
        negatives = self.negatives(positives, verify)
        self.export_kto(positives, negatives)
        self.export_grpo()
        return self.write_counts()


__all__ = ["Align", "AlignConfig", "RunData", "grpo_rows"]

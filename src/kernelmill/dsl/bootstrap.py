"""The retrieval-bootstrapped corpus loop (paper 002, stage 1), for any DSL.

    tasks --features--> order easy -> hard
    round r: next batch of unsolved tasks
        retrieve k nearest verified kernels (corpus as it was before round r)
        -> in-context prompt (the DSL's RAG template) -> generate (any backend)
        -> verify (kernelmill.verify.verify_samples) -> every verified kernel
           not already there joins the corpus (tagged with round r)
    growth curve: corpus size and success rate per round (growth.json, growth.png)

Files under the output folder:
  state.json                  the plan (task order, features), attempts, solved tasks, finished rounds,
                              the round in progress (written atomically after each step)
  tasks.jsonl                 the run's tasks, held-out ones included (later stages read them)
  features.jsonl              the features of every task
  corpus.jsonl                seeds (round 0) and verified kernels (round r), append-only
  verify.sqlite               the verifier's result store (re-verifying is free)
  round_NNN/retrieved.jsonl   per task: the entries retrieved and their similarity
  round_NNN/samples.jsonl     generated samples (appended; `generate` resumes from it)
  round_NNN/verdicts.jsonl    their verdicts
  round_NNN/eval/             held-out evaluation after round NNN (round_000: the seeds alone):
                              retrieved, samples and verdicts (kernelmill.dsl.evaluate)
  growth.json, growth.png
  eval.json, eval.md, eval.png   compile rate, correctness rate, pass@1 and pass@k per round

Held-out tasks (`heldout`) are never bootstrapped and their seed kernels never
enter the corpus; after each round (and before the first) the model is asked
for `eval_samples` kernels per held-out task with the corpus as it then is, and
the verdicts (under the verify function `eval_verify`, the paper's rtol) make
one row of the evaluation table.

Resuming: a re-run reads state.json and redoes the round in progress with the
same tasks; retrieval sees only entries of earlier rounds, so it retrieves
what the first run retrieved; `generate` skips the samples already written,
the store answers the verdicts already computed, and the corpus refuses
entries it has. A task is tried in at most `max_attempts` rounds. A round's
evaluation runs once: a re-run evaluates the finished rounds that have no row
yet (generation and verdicts resume the same way).
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from ..generate import GenerateConfig, SamplingParams, generate_async
from ..records import Sample, Task, Verdict, read_jsonl, write_jsonl
from .evaluate import DEFAULT_EVAL_K, DEFAULT_EVAL_SAMPLES, PAPER_RTOL, summarize, write_eval
from .features import DEFAULT_RIDGE, Features, order_easy_to_hard, task_features
from .prompt import rag_input
from .retrieval import DEFAULT_K, Corpus, CorpusEntry, Embedder, retrieve
from .spec import DSLSpec

STATE_VERSION = 1
VerifyFn = Callable[[Sequence[Task], list[Sample]], list[Verdict]]


@dataclass
class BootstrapConfig:
    k: int = DEFAULT_K
    samples_per_task: int = 1
    tasks_per_round: int = 8
    max_attempts: int = 2
    max_rounds: int | None = None  # rounds this call may run (None: until no task is left)
    params: SamplingParams = field(default_factory=SamplingParams)
    ridge: float = DEFAULT_RIDGE
    progress: bool = False
    # held-out evaluation (used when the loop is given held-out tasks)
    eval_samples: int = DEFAULT_EVAL_SAMPLES  # samples per held-out task per round (n of pass@k)
    eval_k: int = DEFAULT_EVAL_K  # the k of pass@k
    eval_rtol: float | None = PAPER_RTOL  # recorded with the table; the eval verify function applies it

    def __post_init__(self) -> None:
        if self.k < 1 or self.samples_per_task < 1 or self.tasks_per_round < 1 or self.max_attempts < 1:
            raise ValueError("k, samples_per_task, tasks_per_round and max_attempts must be >= 1")
        if self.eval_k < 1 or self.eval_samples < self.eval_k:
            raise ValueError(f"pass@{self.eval_k} needs eval_k >= 1 and at least eval_k samples per held-out task, "
                             f"not {self.eval_samples}")


def _write_json(path: Path, data: Any) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)


class Bootstrap:
    def __init__(self, spec: DSLSpec, tasks: Sequence[Task], out_dir: str | Path, embedder: Embedder,
                 verify: VerifyFn, config: BootstrapConfig | None = None, seeds: Sequence[CorpusEntry] = (),
                 heldout: Sequence[Task] = (), eval_verify: VerifyFn | None = None):
        self.spec, self.embedder, self.verify = spec, embedder, verify
        self.eval_verify = eval_verify or verify
        self.config = config or BootstrapConfig()
        self.out = Path(out_dir)
        self.out.mkdir(parents=True, exist_ok=True)
        self.heldout = {t.task_id: t for t in heldout}
        self.tasks = {t.task_id: t for t in tasks if t.task_id not in self.heldout}
        if not self.tasks and not self.state_path_exists():
            raise ValueError("no tasks left to bootstrap once the held-out tasks are set aside")
        self.template = spec.load_rag_template()
        self.state_path = self.out / "state.json"
        self.corpus = Corpus.load(self.out / "corpus.jsonl")
        self.state = self._load_or_plan(seeds)

    # -- state -----------------------------------------------------------------------------------
    def state_path_exists(self) -> bool:
        return (self.out / "state.json").exists()

    def _load_or_plan(self, seeds: Sequence[CorpusEntry]) -> dict[str, Any]:
        if self.state_path.exists():
            state = json.loads(self.state_path.read_text(encoding="utf-8"))
            if state.get("dsl") != self.spec.name:
                raise ValueError(f"{self.state_path} is a {state.get('dsl')!r} run, not {self.spec.name!r}")
            if sorted(state.get("heldout", [])) != sorted(self.heldout):
                raise ValueError(f"{self.state_path}: the run holds out {sorted(state.get('heldout', [])) or 'nothing'}"
                                 f", not {sorted(self.heldout) or 'nothing'}: a resumed run keeps its split")
            missing = [t for t in state["order"] if t not in self.tasks]
            if missing:
                raise ValueError(f"{self.state_path}: the run's tasks {missing[:5]} are not in the task source")
            state.setdefault("evals", [])
            return state
        write_jsonl(self.out / "tasks.jsonl", [*self.tasks.values(), *self.heldout.values()])
        feats = [task_features(t, self.config.ridge) for t in [*self.tasks.values(), *self.heldout.values()]]
        write_jsonl(self.out / "features.jsonl", [f.to_dict() for f in feats])
        ordered = order_easy_to_hard([f for f in feats if f.task_id in self.tasks])
        summaries = {f.task_id: f.summary() for f in feats}
        held_seeds = [e for e in seeds if e.task_id in self.heldout]
        seeds = [e for e in seeds if e.task_id not in self.heldout]
        for e in seeds:
            if not e.features:
                e.features = summaries.get(e.task_id) or (task_features(Task(e.task_id, e.task_code),
                                                                        self.config.ridge).summary())
            self.corpus.add(e)
        state = {"version": STATE_VERSION, "dsl": self.spec.name, "language": self.spec.language,
                 "order": [f.task_id for f in ordered], "features": summaries,
                 "attempts": {}, "solved": [], "rounds": [], "next_round": 1, "in_progress": None,
                 "seed_size": len(self.corpus), "embedder": self.embedder.name,
                 "heldout": sorted(self.heldout), "heldout_seeds_left_out": len(held_seeds), "evals": [],
                 "config": {k: v for k, v in asdict(self.config).items() if k not in ("progress",)}}
        _write_json(self.state_path, state)
        return state

    def _save(self) -> None:
        _write_json(self.state_path, self.state)

    def pending(self) -> list[str]:
        solved = set(self.state["solved"])
        att = self.state["attempts"]
        left = [t for t in self.state["order"] if t not in solved and att.get(t, 0) < self.config.max_attempts]
        return sorted(left, key=lambda t: att.get(t, 0))  # untried tasks first, each group easy to hard

    # -- one round -------------------------------------------------------------------------------
    def round_dir(self, r: int) -> Path:
        d = self.out / f"round_{r:03d}"
        d.mkdir(parents=True, exist_ok=True)
        return d

    async def run_round(self, backend) -> dict[str, Any] | None:
        st = self.state
        if st["in_progress"] is None:
            batch = self.pending()[: self.config.tasks_per_round]
            if not batch:
                return None
            st["in_progress"] = {"round": st["next_round"], "tasks": batch}
            self._save()
        r, batch = st["in_progress"]["round"], st["in_progress"]["tasks"]
        rd = self.round_dir(r)
        pool = self.corpus.before_round(r)
        size_before = len(pool)
        inputs, retrieved_rows = [], []
        for tid in batch:
            task = self.tasks[tid]
            feats = st["features"].get(tid, "")
            got = retrieve(self.embedder, task, feats, pool, self.config.k)
            retrieved_rows.append({"task_id": tid, "retrieved": [{"entry_id": g.entry.entry_id,
                                                                  "task_id": g.entry.task_id,
                                                                  "score": round(g.score, 6)} for g in got]})
            inputs.append(rag_input(task, feats, got, self.spec.example_label))
        write_jsonl(rd / "retrieved.jsonl", retrieved_rows)
        gcfg = GenerateConfig(n=self.config.samples_per_task, params=self.config.params, progress=self.config.progress)
        await generate_async(inputs, backend, self.template, rd / "samples.jsonl", gcfg)
        wanted = set(batch)
        samples = [s for s in read_jsonl(rd / "samples.jsonl", Sample) if s.task_id in wanted]
        samples = [s for s in samples if int(s.meta.get("sample_index", 0)) < self.config.samples_per_task]
        verdicts = await asyncio.to_thread(self.verify, [self.tasks[t] for t in batch], samples)
        write_jsonl(rd / "verdicts.jsonl", verdicts)
        by_sample = {s.sample_id: s for s in samples}
        added, solved_now = 0, set()
        for v in verdicts:
            if v.status != "ok":
                continue
            s = by_sample[v.sample_id]
            solved_now.add(s.task_id)
            entry = CorpusEntry(f"r{r}:{s.sample_id}", s.task_id, self.tasks[s.task_id].code, s.code,
                                self.spec.language, origin="bootstrap", round=r,
                                features=st["features"].get(s.task_id, ""), sample_id=s.sample_id,
                                speedup=v.speedup, meta={"model": s.model})
            added += self.corpus.add(entry)
        size_after = len(self.corpus.before_round(r + 1))
        n_ok = sum(v.status == "ok" for v in verdicts)
        row = {"round": r, "tasks": batch, "n_tasks": len(batch), "samples": len(samples), "verified": n_ok,
               "solved_tasks": sorted(solved_now), "success_rate": len(solved_now) / len(batch),
               "sample_success_rate": (n_ok / len(samples)) if samples else 0.0,
               "statuses": _count(v.status for v in verdicts),
               "corpus_before": size_before, "corpus_after": size_after, "added": size_after - size_before}
        for tid in batch:
            st["attempts"][tid] = st["attempts"].get(tid, 0) + 1
        st["solved"] = sorted(set(st["solved"]) | solved_now)
        st["rounds"] = [x for x in st["rounds"] if x["round"] != r] + [row]
        st["next_round"], st["in_progress"] = r + 1, None
        self._save()
        write_growth(self.out, st)
        return row

    # -- held-out evaluation -----------------------------------------------------------------------
    async def evaluate_round(self, r: int, backend) -> dict[str, Any]:
        """Held-out evaluation with the corpus as it stands after round r."""
        st, cfg = self.state, self.config
        ed = self.round_dir(r) / "eval"
        ed.mkdir(parents=True, exist_ok=True)
        pool = self.corpus.before_round(r + 1)
        inputs, retrieved_rows = [], []
        for tid, task in sorted(self.heldout.items()):
            feats = st["features"].get(tid, "")
            got = retrieve(self.embedder, task, feats, pool, cfg.k)
            retrieved_rows.append({"task_id": tid, "retrieved": [{"entry_id": g.entry.entry_id,
                                                                  "task_id": g.entry.task_id,
                                                                  "score": round(g.score, 6)} for g in got]})
            inputs.append(rag_input(task, feats, got, self.spec.example_label))
        write_jsonl(ed / "retrieved.jsonl", retrieved_rows)
        gcfg = GenerateConfig(n=cfg.eval_samples, params=cfg.params, progress=cfg.progress)
        await generate_async(inputs, backend, self.template, ed / "samples.jsonl", gcfg)
        samples = [s for s in read_jsonl(ed / "samples.jsonl", Sample)
                   if s.task_id in self.heldout and int(s.meta.get("sample_index", 0)) < cfg.eval_samples]
        verdicts = await asyncio.to_thread(self.eval_verify, [self.heldout[t] for t in sorted(self.heldout)],
                                           samples)
        write_jsonl(ed / "verdicts.jsonl", verdicts)
        row = summarize(sorted(self.heldout), samples, verdicts, cfg.eval_k, expected=cfg.eval_samples)
        row.update(round=r, corpus_size=len(pool))
        st["evals"] = [x for x in st["evals"] if x["round"] != r] + [row]
        self._save()
        write_eval(self.out, st["evals"], self.spec.name, cfg.eval_rtol)
        return row

    async def evaluate_pending(self, backend) -> list[dict[str, Any]]:
        """Evaluate round 0 (the seeds) and every finished round that has no row yet."""
        if not self.heldout:
            return []
        have = {x["round"] for x in self.state["evals"]}
        todo = [r for r in [0, *sorted(x["round"] for x in self.state["rounds"])] if r not in have]
        return [await self.evaluate_round(r, backend) for r in todo]

    async def run_async(self, backend) -> dict[str, Any]:
        done = 0
        try:
            await self.evaluate_pending(backend)
            while self.config.max_rounds is None or done < self.config.max_rounds:
                row = await self.run_round(backend)
                if row is None:
                    break
                done += 1
                await self.evaluate_pending(backend)
        finally:
            await backend.aclose()
        write_growth(self.out, self.state)
        return self.state

    def run(self, backend) -> dict[str, Any]:
        return asyncio.run(self.run_async(backend))


def _count(items) -> dict[str, int]:
    out: dict[str, int] = {}
    for i in items:
        out[i] = out.get(i, 0) + 1
    return dict(sorted(out.items()))


def growth(state: dict[str, Any]) -> dict[str, Any]:
    rounds = sorted(state["rounds"], key=lambda x: x["round"])
    points = [{"round": 0, "corpus_size": state["seed_size"], "success_rate": None, "sample_success_rate": None,
               "tasks": 0, "solved": 0}]
    for x in rounds:
        points.append({"round": x["round"], "corpus_size": x["corpus_after"], "success_rate": x["success_rate"],
                       "sample_success_rate": x["sample_success_rate"], "tasks": x["n_tasks"],
                       "solved": len(x["solved_tasks"])})
    return {"dsl": state["dsl"], "seed_size": state["seed_size"], "points": points,
            "tasks_total": len(state["order"]), "tasks_solved": len(state["solved"])}


def write_growth(out: Path, state: dict[str, Any]) -> dict[str, Any]:
    g = growth(state)
    _write_json(out / "growth.json", g)
    plot_growth(g, out / "growth.png")
    return g


def plot_growth(g: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pts = g["points"]
    xs = [p["round"] for p in pts]
    fig, ax = plt.subplots(figsize=(6, 3.6), dpi=120)
    ax.plot(xs, [p["corpus_size"] for p in pts], marker="o", color="tab:blue", label="corpus size")
    ax.set_xlabel("round")
    ax.set_ylabel("verified kernels in the corpus", color="tab:blue")
    ax.set_xticks(xs)
    ax2 = ax.twinx()
    rx = [p["round"] for p in pts if p["success_rate"] is not None]
    ax2.plot(rx, [p["success_rate"] for p in pts if p["success_rate"] is not None], marker="s", color="tab:orange",
             label="task success rate")
    ax2.set_ylim(0, 1.05)
    ax2.set_ylabel("tasks solved in the round", color="tab:orange")
    ax.set_title(f"{g['dsl']} corpus growth ({g['tasks_solved']}/{g['tasks_total']} tasks solved)")
    fig.tight_layout()
    tmp = path.with_name(f".{path.stem}.tmp.png")
    fig.savefig(tmp)
    plt.close(fig)
    os.replace(tmp, path)


def verifier_fn(config, store: str | Path) -> VerifyFn:
    """`verify_samples` with a config and a store, as the loop calls it."""
    from ..verify import verify_samples

    def run(tasks: Sequence[Task], samples: list[Sample]) -> list[Verdict]:
        if not samples:
            return []
        return verify_samples(list(tasks), samples, config, store=store)

    return run


__all__ = ["Bootstrap", "BootstrapConfig", "Features", "growth", "plot_growth", "verifier_fn", "write_growth"]

"""`kernelmill bootstrap` (the retrieval-bootstrapped corpus loop for a DSL,
with held-out evaluation per round) and `kernelmill align` (stages 2-3 data
from a finished loop) (docs/tilelang.md). Thin typer commands over
`kernelmill.dsl.Bootstrap` and `kernelmill.dsl.align.Align`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from ..verify import VerifyConfig
from .options import with_verify_options


@with_verify_options()
def bootstrap_command(
    source: str = typer.Argument("builtin", help="Tasks (folder, .jsonl/.parquet, 'builtin')."),
    out: Path = typer.Option(..., "--out", "-o", help="Run folder (state.json, corpus.jsonl, rounds, growth.*); "
                             "a re-run resumes."),
    dsl: str = typer.Option("tilelang", "--dsl", help="Target DSL (tilelang; torch runs on CPU)."),
    model: str = typer.Option(..., "--model", "-m", help="Model name on the server, or a local path (hf, vllm)."),
    backend: str = typer.Option("openai", "--backend", help="openai, vllm or hf."),
    base_url: str = typer.Option("http://127.0.0.1:8000/v1", "--base-url", help="OpenAI-compatible server URL."),
    api_key_env: str = typer.Option("OPENAI_API_KEY", "--api-key-env", help="Variable holding the API key."),
    concurrency: int = typer.Option(16, "--concurrency", "-c", help="Requests in flight (openai)."),
    batch_size: int = typer.Option(4, "--batch-size", help="Batch size (hf)."),
    tasks: Optional[str] = typer.Option(None, "--tasks", help="Comma-separated task ids (default: all)."),
    heldout: Optional[str] = typer.Option(None, "--heldout", help="Held-out tasks: comma-separated ids, or a file "
                                          "with one id a line. Never bootstrapped, their seeds left out of the "
                                          "corpus; evaluated after every round (eval.json, eval.md, eval.png)."),
    eval_n: int = typer.Option(5, "--eval-n", help="Samples per held-out task per round (the n of pass@k)."),
    eval_k: int = typer.Option(5, "--eval-k", help="The k of pass@k (pass@1 is reported too)."),
    eval_rtol: float = typer.Option(1e-5, "--eval-rtol", help="rtol of the held-out correctness check, every dtype "
                                    "(1e-5, the DSL-bootstrapping recipe's; atol stays the verifier's). Negative: the verifier's own."),
    seed_corpus: Optional[Path] = typer.Option(None, "--seed-corpus", help="Extra seed kernels (corpus JSONL), "
                                               "besides the suite's verified candidates in the DSL."),
    embedder: str = typer.Option("", "--embedder", help="sentence-transformers model name or path "
                                 "(default: jinaai/jina-embeddings-v2-base-code)."),
    trust_remote_code: bool = typer.Option(False, "--trust-remote-code", help="Let the embedding model run its "
                                           "own code (the default model needs it)."),
    k: int = typer.Option(5, "-k", help="Retrieved examples per prompt."),
    n: int = typer.Option(1, "-n", help="Samples per task per round."),
    per_round: int = typer.Option(8, "--per-round", help="Tasks per round."),
    max_attempts: int = typer.Option(2, "--max-attempts", help="Rounds a task is tried in."),
    max_rounds: Optional[int] = typer.Option(None, "--max-rounds", help="Stop after this many rounds."),
    temperature: float = typer.Option(0.7, "--temperature"),
    max_tokens: int = typer.Option(8192, "--max-tokens"),
    seed: Optional[int] = typer.Option(None, "--seed", help="Base sampling seed."),
    verify_config: VerifyConfig = None,
    time_kernels: bool = typer.Option(True, "--time/--no-time", help="Time verified kernels."),
) -> None:
    """Grow a verified corpus in a DSL: retrieve, prompt, generate, verify, add; easy to hard; resumable."""
    from ..generate import BackendError, SamplingParams, make_backend
    from ..tasks import load_tasks
    from ..dsl.bootstrap import Bootstrap, BootstrapConfig, verifier_fn
    from ..dsl.evaluate import with_rtol
    from ..dsl.retrieval import DEFAULT_EMBEDDER, Embedder, seed_entries
    from ..dsl.spec import get_dsl

    err = typer.echo
    try:
        spec = get_dsl(dsl)
        all_tasks = load_tasks(source).tasks
        by_id = {t.task_id: t for t in all_tasks}
        ts = _pick(by_id, tasks, "--tasks") if tasks else all_tasks
        held = _pick(by_id, _read_ids(heldout), "--heldout") if heldout else []
        if backend == "openai":
            be = make_backend("openai", model, base_url=base_url, api_key_env=api_key_env, concurrency=concurrency)
        elif backend == "hf":
            be = make_backend("hf", model, batch_size=batch_size)
        else:
            be = make_backend(backend, model)
        vcfg = verify_config
        vcfg.time = time_kernels
        rtol = eval_rtol if eval_rtol >= 0 else None
        cfg = BootstrapConfig(k=k, samples_per_task=n, tasks_per_round=per_round, max_attempts=max_attempts,
                              max_rounds=max_rounds, params=SamplingParams(temperature, 0.95, max_tokens, seed),
                              progress=True, eval_samples=eval_n, eval_k=eval_k, eval_rtol=rtol)
        seeds = seed_entries(spec.language, spec.seed_glob, extra=seed_corpus)
        emb = Embedder(embedder or DEFAULT_EMBEDDER, trust_remote_code=trust_remote_code)
        out.mkdir(parents=True, exist_ok=True)
        boot = Bootstrap(spec, ts, out, emb, verifier_fn(vcfg, out / "verify.sqlite"), cfg, seeds, heldout=held,
                         eval_verify=verifier_fn(with_rtol(vcfg, rtol), out / "verify.sqlite"))
    except (ValueError, BackendError, OSError) as exc:
        err(f"error: {exc}", err=True)
        raise typer.Exit(2)
    if len(boot.corpus) == 0:
        err(f"note: the {dsl} corpus has no seed kernels; the first prompts carry no examples", err=True)
    state = boot.run(be)
    for r in state["rounds"]:
        err(f"round {r['round']}: {len(r['solved_tasks'])}/{r['n_tasks']} tasks solved, "
            f"{r['verified']}/{r['samples']} samples verified, corpus {r['corpus_before']} -> {r['corpus_after']}",
            err=True)
    if state.get("evals"):
        err((out / "eval.md").read_text(encoding="utf-8"), err=True)
    summary = {"out": str(out), "corpus": len(boot.corpus), "solved": len(state["solved"]),
               "tasks": len(state["order"]), "growth": str(out / "growth.png")}
    if state.get("evals"):
        last = max(state["evals"], key=lambda x: x["round"])
        summary.update(heldout=len(state["heldout"]), eval=str(out / "eval.json"),
                       last_eval={key: last[key] for key in ("round", "compile_rate", "correct_rate", "pass@1",
                                                             f"pass@{last['k']}")})
    err(json.dumps(summary))


def _read_ids(text: str) -> str:
    """`--heldout`: comma-separated ids, or a file of ids (one a line, # comments)."""
    path = Path(text)
    if path.is_file():
        lines = [ln.split("#", 1)[0].strip() for ln in path.read_text(encoding="utf-8").splitlines()]
        return ",".join(ln for ln in lines if ln)
    return text


def _pick(by_id: dict, ids: str, option: str) -> list:
    want = [t.strip() for t in ids.split(",") if t.strip()]
    unknown = [t for t in want if t not in by_id]
    if unknown:
        raise ValueError(f"{option}: unknown task ids: {', '.join(unknown)}")
    return [by_id[t] for t in want]


@with_verify_options()
def align_command(
    run: Path = typer.Argument(..., help="A `kernelmill bootstrap` run folder (state.json, tasks.jsonl, corpus.jsonl)."),
    out: Path = typer.Option(..., "--out", "-o", help="Output folder (kernels, traces, scores, negatives, kto/, "
                             "grpo/, align.json); a re-run resumes."),
    pool: list[str] = typer.Option(..., "--pool-model", help="A model of the trace pool (repeatable); each writes "
                                   "one trace per verified kernel."),
    base_model: str = typer.Option(..., "--base-model", help="Base model (name or path, transformers) that scores "
                                   "log P(trace | task)."),
    backend: str = typer.Option("openai", "--backend", help="Backend of the pool: openai, vllm or hf."),
    base_url: str = typer.Option("http://127.0.0.1:8000/v1", "--base-url", help="OpenAI-compatible server URL."),
    api_key_env: str = typer.Option("OPENAI_API_KEY", "--api-key-env", help="Variable holding the API key."),
    concurrency: int = typer.Option(16, "--concurrency", "-c", help="Requests in flight (openai)."),
    fraction: float = typer.Option(0.25, "--fraction", help="Traces kept by score (paper: the top quartile)."),
    ratio: str = typer.Option("3:8", "--ratio", help="Desirable:undesirable rows in the KTO export (paper: 3:8)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the ratio's deterministic subsampling."),
    score_device: Optional[str] = typer.Option(None, "--score-device", help="Device of the base model "
                                               "(default: cuda when there is one)."),
    score_batch: int = typer.Option(8, "--score-batch", help="Traces scored per batch."),
    score_max_length: Optional[int] = typer.Option(None, "--score-max-length", help="Cut the prompt's start so "
                                                   "prompt + trace fit this many tokens."),
    seeds: bool = typer.Option(True, "--seeds/--no-seeds", help="Traces for the seed kernels too."),
    temperature: float = typer.Option(0.7, "--temperature"),
    max_tokens: int = typer.Option(4096, "--max-tokens"),
    verify_config: VerifyConfig = None,
) -> None:
    """Stages 2-3 data from a bootstrap run: post-hoc traces from a pool of models, scored by
    log P(trace | task) under the base model (top fraction kept); negatives with injected errors
    kept only when the verifier confirms a failure, plus the loop's failed attempts; the KTO
    export at the ratio; GRPO prompts for the run's training tasks. Held-out tasks stay out."""
    from ..generate import BackendError, SamplingParams, make_backend
    from ..dsl.align import Align, AlignConfig
    from ..dsl.bootstrap import verifier_fn
    from ..dsl.kto import parse_ratio
    from ..dsl.spec import get_dsl

    err = typer.echo
    try:
        state = json.loads((run / "state.json").read_text(encoding="utf-8"))
        spec = get_dsl(state["dsl"])
        cfg = AlignConfig(fraction=fraction, ratio=parse_ratio(ratio), seed=seed, score_batch_size=score_batch,
                          score_max_length=score_max_length, include_seeds=seeds,
                          params=SamplingParams(temperature, 0.95, max_tokens, seed), progress=True)
        align = Align(spec, run, out, cfg)
        if backend == "openai":
            backends = [make_backend("openai", m, base_url=base_url, api_key_env=api_key_env, concurrency=concurrency)
                        for m in pool]
        else:
            backends = [make_backend(backend, m) for m in pool]
        vcfg = verify_config
        vcfg.time = False  # a negative needs a failure, not a speed
        counts = align.run_all(backends, base_model, verifier_fn(vcfg, out / "verify.sqlite"), score_device)
    except (ValueError, KeyError, BackendError, OSError) as exc:
        err(f"error: {exc}", err=True)
        raise typer.Exit(2)
    neg = counts["negatives"]
    err(f"kernels {counts['kernels']['total']}, traces {counts['traces']['written']} "
        f"({counts['scored']['kept']} kept), negatives: {neg['kept']} injected kept, {neg['dropped']} dropped "
        f"{neg['dropped_by_reason']}, {neg['failed_attempts']} failed attempts; KTO {counts['kto']['positives']}:"
        f"{counts['kto']['negatives']} rows; GRPO {counts['grpo'].get('tasks', 0)} tasks", err=True)
    if counts["kto"].get("balance_note"):
        err(f"note: {counts['kto']['balance_note']}", err=True)
    err(json.dumps({"out": str(out), "kto": str(out / "kto" / "train.jsonl"), "grpo": str(out / "grpo" / "train.jsonl"),
                    "counts": str(out / "align.json")}))

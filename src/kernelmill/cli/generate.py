"""`kernelmill generate` and `kernelmill refine`: thin commands over the library."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import typer

from ..chat.prompts import TemplateError, list_templates, load_template
from ..generate.backend import BACKENDS, BackendError, SamplingParams
from ..generate.factory import make_backend
from ..generate.refine import RefineConfig, default_verdicts_path, refine
from ..generate.runner import GenerateConfig, generate, prompt_inputs
from ..records import Task
from ..verify import VerifyConfig
from .common import load_tasks_or_exit
from .console import err, fail
from .options import with_verify_options


# options both commands share, declared once
BackendOpt = typer.Option("openai", "--backend", help=f"One of: {', '.join(BACKENDS)}.")
ModelOpt = typer.Option(..., "--model", "-m", help="Model name on the server, or a local path (hf, vllm).")
BaseUrlOpt = typer.Option("http://127.0.0.1:8000/v1", "--base-url", help="OpenAI-compatible server URL (openai).")
KeyEnvOpt = typer.Option("OPENAI_API_KEY", "--api-key-env", help="Environment variable holding the API key; "
                         "unset is fine for servers without auth.")
TemplateOpt = typer.Option("cuda", "--template", "-t", help=f"Template name ({', '.join(list_templates())}) or path.")
TempOpt = typer.Option(0.6, "--temperature")
TopPOpt = typer.Option(0.95, "--top-p")
MaxTokOpt = typer.Option(16384, "--max-tokens", help="Completion token limit (reasoning included).")
ConcOpt = typer.Option(16, "--concurrency", "-c", help="Requests in flight (openai).")
SeedOpt = typer.Option(None, "--seed", help="Base seed; each (task, sample, turn) gets its own derived seed.")
TokOpt = typer.Option(None, "--tokenizer", help="Tokenizer path/name for exact reasoning token counts (openai).")
BatchOpt = typer.Option(4, "--batch-size", help="Batch size (hf); chunk size is 64x this (vllm).")
RetriesOpt = typer.Option(5, "--max-retries", help="Retries per request on 429/5xx/timeouts/bad replies.")
TimeoutOpt = typer.Option(900.0, "--request-timeout", help="Seconds to wait for one reply (openai).")
ExtraOpt = typer.Option(None, "--extra-body", help='JSON merged into each request, e.g. \'{"top_k": 20}\'.')
TasksOpt = typer.Option(None, "--tasks", help="Comma-separated task ids to run (default: all).")
ExamplesOpt = typer.Option("builtin", "--examples", help="Few-shot source: builtin (suite candidates) or fallback.")
ProgressOpt = typer.Option(True, "--progress/--no-progress")


def _backend(backend: str, model: str, base_url: str, api_key_env: str, concurrency: int, tokenizer: Optional[str],
             batch_size: int, max_retries: int, extra_body: Optional[str], timeout_s: float):
    try:
        if backend == "openai":
            extra = json.loads(extra_body) if extra_body else None
            if extra is not None and not isinstance(extra, dict):
                raise ValueError("--extra-body must be a JSON object")
            return make_backend("openai", model, base_url=base_url, api_key_env=api_key_env,
                                concurrency=concurrency, tokenizer=tokenizer, max_retries=max_retries,
                                extra_body=extra, timeout_s=timeout_s)
        if backend == "hf":
            return make_backend("hf", model, batch_size=batch_size, tokenizer=tokenizer)
        return make_backend(backend, model, chunk_size=batch_size * 64)
    except (BackendError, ValueError) as exc:
        fail(f"{exc}")


def _template(name: str):
    try:
        return load_template(name)
    except TemplateError as exc:
        fail(f"{exc}")


def _tasks(source: str, only: Optional[str]) -> list[Task]:
    ts = load_tasks_or_exit(source)
    tasks = ts.tasks
    if only:
        wanted = [x.strip() for x in only.split(",") if x.strip()]
        have = ts.by_id()
        unknown = [w for w in wanted if w not in have]
        if unknown:
            fail(f"no task {', '.join(map(repr, unknown))} in {source}")
        tasks = [have[w] for w in wanted]
    return tasks


def _run(fn, *args: Any):
    try:
        return fn(*args)
    except (BackendError, TemplateError) as exc:
        fail(f"{exc}", 1)
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/yellow]: finished samples are saved; run the same command again to resume")
        raise typer.Exit(130)


def generate_command(
    source: str = typer.Argument(..., help="Tasks (folder, .jsonl/.parquet, 'builtin'), or a pairs JSONL for PTX templates."),
    out: Path = typer.Option(..., "--out", "-o", help="Samples JSONL (appended; a re-run resumes)."),
    backend: str = BackendOpt, model: str = ModelOpt, base_url: str = BaseUrlOpt, api_key_env: str = KeyEnvOpt,
    n: int = typer.Option(5, "-n", help="Samples per task."),
    template: str = TemplateOpt, temperature: float = TempOpt, top_p: float = TopPOpt, max_tokens: int = MaxTokOpt,
    concurrency: int = ConcOpt, seed: Optional[int] = SeedOpt, tokenizer: Optional[str] = TokOpt,
    batch_size: int = BatchOpt, max_retries: int = RetriesOpt, extra_body: Optional[str] = ExtraOpt,
    request_timeout: float = TimeoutOpt, tasks: Optional[str] = TasksOpt, examples: str = ExamplesOpt,
    ptx_field: str = typer.Option("ptx", "--ptx-field", help="For PTX templates: ptx or rolled_ptx."),
    retry_errors: bool = typer.Option(False, "--retry-errors", help="Redo samples whose request failed."),
    progress: bool = ProgressOpt,
) -> None:
    """Sample N kernels (with reasoning) per task from an LLM; resumable."""
    tpl = _template(template)
    cfg = GenerateConfig(n=n, params=SamplingParams(temperature, top_p, max_tokens, seed), examples=examples,
                         ptx_field=ptx_field, retry_errors=retry_errors, progress=progress)
    if tpl.input == "ptx":
        if not Path(source).exists():
            fail(f"pairs file not found: {source}")
        inputs = prompt_inputs(source, tpl, cfg)
    else:
        inputs = _run(prompt_inputs, _tasks(source, tasks), tpl, cfg)
    be = _backend(backend, model, base_url, api_key_env, concurrency, tokenizer, batch_size, max_retries, extra_body,
                  request_timeout)
    s = _run(generate, inputs, be, tpl, out, cfg)
    for p in s.problems:
        err.print(f"[yellow]note:[/yellow] {p}")
    rate = s.written / s.seconds if s.seconds else 0.0
    err.print(f"{out}: wrote {s.written} samples ({s.skipped} already there) in {s.seconds:.1f}s "
              f"({rate:.2f}/s, {s.completion_tokens:,} completion tokens); parse errors {s.parse_errors}, "
              f"truncated {s.truncated}, request errors {dict(s.errors) or 0}", soft_wrap=True)


@with_verify_options()
def refine_command(
    source: str = typer.Argument(..., help="Tasks (folder, .jsonl/.parquet, 'builtin')."),
    out: Path = typer.Option(..., "--out", "-o", help="Samples JSONL, one line per turn (a re-run resumes)."),
    verdicts: Optional[Path] = typer.Option(None, "--verdicts", help="Verdicts JSONL (default: OUT.verdicts.jsonl)."),
    backend: str = BackendOpt, model: str = ModelOpt, base_url: str = BaseUrlOpt, api_key_env: str = KeyEnvOpt,
    turns: int = typer.Option(4, "--turns", "-T", help="Turns per chain."),
    chains: int = typer.Option(1, "--chains", "-n", help="Independent chains per task."),
    template: str = TemplateOpt, temperature: float = TempOpt, top_p: float = TopPOpt, max_tokens: int = MaxTokOpt,
    concurrency: int = ConcOpt, seed: Optional[int] = SeedOpt, tokenizer: Optional[str] = TokOpt,
    batch_size: int = BatchOpt, max_retries: int = RetriesOpt, extra_body: Optional[str] = ExtraOpt,
    request_timeout: float = TimeoutOpt, tasks: Optional[str] = TasksOpt, examples: str = ExamplesOpt,
    reset_to_last_good: bool = typer.Option(False, "--reset-to-last-good", help="After a failed turn, go on from "
                                            "the last correct kernel (TileLang multi-turn rule)."),
    keep_reasoning: bool = typer.Option(False, "--keep-reasoning", help="Keep earlier turns' reasoning in the history."),
    stop_speedup: float = typer.Option(1.0, "--stop-speedup", help="Stop a chain once correct with this speedup; "
                                       "a negative value never stops early."),
    verify_config: VerifyConfig = None,
    store: Optional[Path] = typer.Option(None, "--store", help="Verification result store (SQLite)."),
    progress: bool = ProgressOpt,
) -> None:
    """Multi-turn generate -> verify -> feedback, up to T turns per chain; resumable."""
    try:
        from ..verify import verify_samples
    except ImportError as exc:
        fail(f"refine needs kernelmill.verify, which failed to import: {exc}")
    tpl = _template(template)
    if tpl.input != "task":
        fail(f"refine needs a task template; {tpl.path} takes {tpl.input!r} input")
    task_list = _tasks(source, tasks)
    be = _backend(backend, model, base_url, api_key_env, concurrency, tokenizer, batch_size, max_retries, extra_body,
                  request_timeout)
    vcfg = verify_config

    def verify(ts, samples):
        return verify_samples(ts, samples, vcfg, store=str(store) if store else None, progress=progress)

    cfg = RefineConfig(turns=turns, chains=chains, params=SamplingParams(temperature, top_p, max_tokens, seed),
                       examples=examples, reset_to_last_good=reset_to_last_good, keep_reasoning=keep_reasoning,
                       stop_speedup=None if stop_speedup < 0 else stop_speedup, progress=progress)
    vpath = verdicts or default_verdicts_path(out)
    s = _run(refine, task_list, be, tpl, verify, out, vpath, cfg)
    solved = "  ".join(f"t{t}:{k}/{s.chains}" for t, k in enumerate(s.solved_by_turn))
    err.print(f"{out}: {s.samples_written} new samples, {s.verdicts_written} new verdicts ({vpath})", soft_wrap=True)
    err.print(f"chains with a correct kernel by turn: {solved}; ended: {dict(s.stopped)}", soft_wrap=True)

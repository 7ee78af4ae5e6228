"""`kernelmill train sft|kto|grpo --config FILE.yaml` and `kernelmill train tiny SFT.jsonl -o DIR`.

A run picks up from the last checkpoint in `training.output_dir` unless
`--fresh` is given, so an interrupted run is re-run with the same command; a
finished run re-run with the same recipe does nothing (train/run.py).
"""

from __future__ import annotations

import typer

from .console import console, err, fail

app = typer.Typer(help="Train on the curated exports with TRL (SFT/LoRA/QLoRA, KTO, multi-turn GRPO).",
                  no_args_is_help=True)

_CONFIG = typer.Option(..., "--config", "-c", help="Recipe YAML (see configs/).")
_SET = typer.Option(None, "--set", help="Override a recipe value: section.key=value (repeatable).")
_FRESH = typer.Option(False, "--fresh", help="Ignore checkpoints in output_dir and start over.")


def _need_trl() -> None:
    try:
        import trl  # noqa: F401
    except ImportError:
        fail("training needs the train extra: pip install 'kernelmill[train]'")


def _run(kind: str, config: str, overrides: list[str] | None, fresh: bool) -> None:
    _need_trl()
    from ..train.config import ConfigError, load_recipe
    from ..train.data import DatasetFormatError
    from ..train.masks import LabelMaskError
    from ..train.models import GpuRequiredError, LaunchError
    from ..train.outputs import launch_rank
    from ..train.run import run_recipe

    try:
        recipe = load_recipe(config, kind=kind, overrides=overrides or [])
        result = run_recipe(recipe, resume=not fresh)
    except (ConfigError, DatasetFormatError, LabelMaskError, GpuRequiredError, LaunchError) as exc:
        fail(f"{exc}")
    _print_result(result, *launch_rank())
    _leave_process_group()


def _leave_process_group() -> None:
    """Under `accelerate launch`, each process leaves its process group before it exits. A
    gloo group left to the interpreter's teardown once aborted a rank whose work was done and
    written ("terminate called without an active exception", SIGABRT, exit -6), and the launcher
    then failed the whole run (tests/train/test_two_process_sft.py, seventh session). Local to
    this process: no collective, so a rank that failed cannot keep the others waiting here."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def _print_result(result: dict, rank: int = 0, processes: int = 1) -> None:
    """The summary, once: under `accelerate launch` the main process prints it and every other
    process one line on stderr that it finished (so the log shows how many ran)."""
    if processes > 1:
        err.print(f"process {rank} of {processes} finished")
        if rank != 0:
            return
    if result.get("already_complete"):
        console.print(f"already finished: {result.get('steps')} steps, model in {result.get('output_dir')} "
                      f"({result['already_complete']}); nothing to do (--fresh trains again)")
        return
    if result.get("resumed_from"):
        console.print(f"resumed from {result['resumed_from']}")
    where = ""
    if result.get("processes", 1) > 1:
        where = f" on {result['processes']} processes ({result.get('distributed')})"
    console.print(f"[green]done[/green]: {result['steps']} steps{where}, saved to {result['output_dir']}")
    if result.get("tokens_per_s"):
        console.print(f"{result['tokens']:.0f} tokens in {result['train_runtime_s']:.1f} s: "
                      f"{result['tokens_per_s']:.0f} tokens/s (all processes)")
    if result.get("first_loss") is not None:
        console.print(f"loss {result['first_loss']:.4f} -> {result['last_loss']:.4f}")
    if result.get("first_reward") is not None:
        console.print(f"reward {result['first_reward']:.3f} -> {result['last_reward']:.3f}")
    if result.get("curves"):
        console.print(f"curves: {result['curves']}")
    if result.get("balance_warning"):
        console.print(f"[yellow]note:[/yellow] {result['balance_warning']}")


@app.command("sft")
def sft(config: str = _CONFIG, set_: list[str] = _SET, fresh: bool = _FRESH) -> None:
    """Supervised fine-tuning (loss on assistant turns only) on the SFT export."""
    _run("sft", config, set_, fresh)


@app.command("kto")
def kto(config: str = _CONFIG, set_: list[str] = _SET, fresh: bool = _FRESH) -> None:
    """KTO on the unpaired preference export."""
    _run("kto", config, set_, fresh)


@app.command("grpo")
def grpo(config: str = _CONFIG, set_: list[str] = _SET, fresh: bool = _FRESH) -> None:
    """GRPO with verified kernel rewards (multi-turn episodes when episode.max_turns > 1)."""
    _run("grpo", config, set_, fresh)


@app.command("tiny")
def tiny(
    data: str = typer.Argument(..., help="SFT export (JSONL with messages), e.g. from `kernelmill export --format sft-messages`."),
    out: str = typer.Option("kernelmill-out/tiny", "-o", "--out", help="Folder for the model, recipe.yaml and run/."),
    steps: int = typer.Option(30, "--steps", help="Optimizer steps."),
    batch_size: int = typer.Option(2, "--batch-size"),
    max_length: int = typer.Option(2048, "--max-length", help="Tokens per row (longer rows are cut)."),
    fresh: bool = _FRESH,
) -> None:
    """SFT of a tiny random model on the CPU: the whole training path in minutes.

    Builds a 2-layer chat model with a tokenizer trained on DATA (no downloads),
    writes OUT/recipe.yaml (re-runnable with `kernelmill train sft --config`)
    and trains it; the model, log and curves go to OUT/run/. It learns only
    what DATA shows it: a smoke run of the recipe, not a useful model."""
    _need_trl()
    from ..train.config import ConfigError
    from ..train.data import DatasetFormatError
    from ..train.masks import LabelMaskError
    from ..train.run import tiny_run

    try:
        result = tiny_run(data, out, steps=steps, batch_size=batch_size, max_length=max_length, resume=not fresh)
    except (ConfigError, DatasetFormatError, LabelMaskError) as exc:
        fail(f"{exc}")
    console.print(f"recipe: {result['recipe']}")
    _print_result(result)

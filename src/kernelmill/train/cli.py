"""`kernelmill train sft|kto|grpo --config FILE.yaml`.

A run picks up from the last checkpoint in `training.output_dir` unless
`--fresh` is given, so an interrupted run is re-run with the same command.
"""

from __future__ import annotations

import typer
from rich.console import Console

app = typer.Typer(help="Train on the curated exports with TRL (SFT/LoRA/QLoRA, KTO, multi-turn GRPO).",
                  no_args_is_help=True)
console = Console()
err = Console(stderr=True, soft_wrap=True)

_CONFIG = typer.Option(..., "--config", "-c", help="Recipe YAML (see configs/).")
_SET = typer.Option(None, "--set", help="Override a recipe value: section.key=value (repeatable).")
_FRESH = typer.Option(False, "--fresh", help="Ignore checkpoints in output_dir and start over.")


def _run(kind: str, config: str, overrides: list[str] | None, fresh: bool) -> None:
    try:
        import trl  # noqa: F401
    except ImportError:
        err.print("[red]error:[/red] training needs the train extra: pip install 'kernelmill[train]'")
        raise typer.Exit(2)
    from .config import ConfigError, load_recipe
    from .data import DatasetFormatError
    from .masks import LabelMaskError
    from .models import GpuRequiredError

    try:
        recipe = load_recipe(config, kind=kind, overrides=overrides or [])
        if kind == "sft":
            from .sft import run_sft as run
        elif kind == "kto":
            from .kto import run_kto as run
        else:
            from .grpo import run_grpo as run
        result = run(recipe, resume=not fresh)
    except (ConfigError, DatasetFormatError, LabelMaskError, GpuRequiredError) as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2)
    if result.get("resumed_from"):
        console.print(f"resumed from {result['resumed_from']}")
    console.print(f"[green]done[/green]: {result['steps']} steps, saved to {result['output_dir']}")
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

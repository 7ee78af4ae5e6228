"""Running a recipe once: a finished run is not trained again, and the tiny CPU run.

`run_recipe(recipe)` dispatches to SFT/KTO/GRPO and, when the run ends, writes
`run_complete.json` in `training.output_dir` with a fingerprint of the recipe
(model, data, training settings, adapters). Running the same recipe again
finds the file and returns the recorded result without building a trainer, so
re-running a finished command does nothing (it does not train past
`max_steps`, and does not overwrite the model with a second run). A changed
recipe (more steps, other data) does not match the fingerprint and runs,
resuming from the last checkpoint; `resume=False` (`--fresh`) always runs.

`tiny_run(data, out)` is the first training run on a laptop: it builds a tiny
random chat model from the data's own text (`tiny.py`, no downloads), writes
an SFT recipe for it (`OUT/recipe.yaml`, full fine-tuning in float32 on the
CPU) and runs it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

from .config import Recipe, load_recipe

COMPLETE_FILE = "run_complete.json"


def recipe_fingerprint(recipe: Recipe) -> str:
    data = dataclasses.asdict(recipe)
    data.pop("source", None)
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()


def completed_run(recipe: Recipe) -> dict[str, Any] | None:
    """The recorded result of this exact recipe's finished run, or None."""
    path = recipe.output_dir / COMPLETE_FILE
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("fingerprint") != recipe_fingerprint(recipe):
        return None
    return dict(record.get("result") or {}, already_complete=str(path))


def _mark_complete(recipe: Recipe, result: dict[str, Any]) -> None:
    from .outputs import is_main_process

    if not is_main_process():
        # one writer: under `accelerate launch` every rank returns here, the others with a result of
        # their own (no curves), and two writers of one .tmp file race each other's rename
        return
    keep = {k: v for k, v in result.items() if isinstance(v, (str, int, float, bool, type(None))) and k != "rank"}
    record = {"kind": recipe.kind, "source": recipe.source, "fingerprint": recipe_fingerprint(recipe), "result": keep}
    path = recipe.output_dir / COMPLETE_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=2) + "\n")
    tmp.replace(path)


def run_recipe(recipe: Recipe, resume: bool = True) -> dict[str, Any]:
    """Train `recipe` unless this exact recipe already finished in its output_dir."""
    if resume:
        done = completed_run(recipe)
        if done is not None:
            return done
    if recipe.kind == "sft":
        from .sft import run_sft as run
    elif recipe.kind == "kto":
        from .kto import run_kto as run
    else:
        from .grpo import run_grpo as run
    result = run(recipe, resume=resume)
    _mark_complete(recipe, result)
    return result


# ------------------------------------------------------------------ tiny run
TINY_DEFAULTS = {"steps": 30, "batch_size": 2, "learning_rate": 3.0e-3, "max_length": 2048}


def _texts(rows: list[dict[str, Any]]) -> list[str]:
    texts = []
    for row in rows:
        if isinstance(row.get("messages"), list):
            texts += [str(m.get("content", "")) for m in row["messages"] if isinstance(m, dict)]
        for key in ("prompt", "completion"):
            value = row.get(key)
            if isinstance(value, str):
                texts.append(value)
            elif isinstance(value, list):
                texts += [str(m.get("content", "")) for m in value if isinstance(m, dict)]
    return texts


def tiny_recipe_text(model_dir: Path, data: Path, run_dir: Path, steps: int, batch_size: int,
                     learning_rate: float, max_length: int) -> str:
    return (
        "# Written by `kernelmill train tiny`: full SFT of a tiny random model on the CPU.\n"
        f"# Re-run with: kernelmill train sft --config {run_dir.parent / 'recipe.yaml'}\n"
        "recipe: sft\n"
        f"model:\n  name_or_path: {model_dir}\n  dtype: float32\n"
        f"data:\n  train: {data}\n"
        "training:\n"
        f"  output_dir: {run_dir}\n"
        f"  max_steps: {steps}\n"
        f"  per_device_train_batch_size: {batch_size}\n"
        f"  learning_rate: {learning_rate}\n"
        f"  max_length: {max_length}\n"
        "  assistant_only_loss: true\n"
        "  use_cpu: true\n"
        "  disable_tqdm: true\n"
        f"  save_steps: {max(1, steps // 2)}\n"
    )


def tiny_run(data: str | Path, out: str | Path, steps: int = TINY_DEFAULTS["steps"],
             batch_size: int = TINY_DEFAULTS["batch_size"], learning_rate: float = TINY_DEFAULTS["learning_rate"],
             max_length: int = TINY_DEFAULTS["max_length"], resume: bool = True, hidden: int = 64,
             layers: int = 2) -> dict[str, Any]:
    """Build a tiny model for `data` (an SFT export) under `out`, write
    `out/recipe.yaml` and run it (`out/run/` holds the checkpoints and model)."""
    from .config import ConfigError
    from .data import load_rows
    from .outputs import launched_processes
    from .tiny import build_tiny_model

    if launched_processes() > 1:  # every process would build the model and write the recipe in one folder
        raise ConfigError("`kernelmill train tiny` builds its model and recipe in one process: run it alone, "
                          "then launch the recipe it writes (accelerate launch ... -m kernelmill.cli train sft "
                          "--config OUT/recipe.yaml)")
    data, out = Path(data).resolve(), Path(out).resolve()
    rows = load_rows("sft", data)  # checks the shape before anything is built
    model_dir = out / "model"
    if not (model_dir / "config.json").exists() or not resume:
        build_tiny_model(model_dir, _texts(rows) * 2, hidden=hidden, layers=layers,
                         max_positions=max(4096, max_length))
    recipe_path = out / "recipe.yaml"
    recipe_path.write_text(tiny_recipe_text(model_dir, data, out / "run", steps, batch_size, learning_rate,
                                            max_length))
    result = run_recipe(load_recipe(recipe_path, kind="sft"), resume=resume)
    result["recipe"] = str(recipe_path)
    return result

"""What a training run leaves behind, and picking a run up again.

`output_dir/checkpoint-N/` are the Trainer's checkpoints (HF layout, with
optimizer and RNG state, so resuming is exact); the final model or adapter is
saved at the top of `output_dir` (`config.json` + weights, or
`adapter_config.json` + `adapter_model.safetensors`) with its tokenizer; the
log history goes to `log_history.jsonl` and the curves to `curves.png`.

Under `accelerate launch` every process runs the same code; each file here has
one writer, the main process (`launch_rank()` is 0), except the model itself:
`trainer.save_model` runs on every process (ZeRO-3 gathers the shards for it)
and the Trainer writes it from the main process only.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

# what each recipe plots, first match per panel
CURVES = {
    "sft": [("loss", ["loss"]), ("eval loss", ["eval_loss"]), ("learning rate", ["learning_rate"])],
    "kto": [("loss", ["loss"]), ("rewards", ["rewards/chosen_sum", "rewards/chosen", "rewards/margins"]),
            ("KL", ["kl"])],
    "grpo": [("loss", ["loss"]), ("reward", ["reward"]), ("reward std", ["reward_std"])],
}


_RANK_VARS = ("RANK", "PMI_RANK", "OMPI_COMM_WORLD_RANK", "MV2_COMM_WORLD_RANK")
_SIZE_VARS = ("WORLD_SIZE", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE")


def _env_int(names: tuple[str, ...], default: int) -> int:
    for name in names:
        try:
            return int(os.environ[name])
        except (KeyError, ValueError):
            continue
    return default


def launched_processes() -> int:
    """How many processes the launcher started (torchrun/accelerate or MPI variables); 1 when run alone."""
    return _env_int(_SIZE_VARS, 1)


def launch_rank() -> tuple[int, int]:
    """(rank, number of processes) of this process: the process group's once it exists, else the
    launcher's variables; (0, 1) when run alone."""
    try:
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized():
            return dist.get_rank(), dist.get_world_size()
    except ImportError:
        pass
    return _env_int(_RANK_VARS, 0), launched_processes()


def is_main_process() -> bool:
    return launch_rank()[0] == 0


def last_checkpoint(output_dir: str | Path) -> str | None:
    from transformers.trainer_utils import get_last_checkpoint

    path = Path(output_dir)
    return get_last_checkpoint(str(path)) if path.is_dir() else None


def plot_curves(log_history: list[dict[str, Any]], kind: str, path: str | Path, title: str = "") -> Path | None:
    """One panel per tracked quantity against the optimizer step."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = []
    for label, keys in CURVES[kind]:
        for key in keys:
            pts = [(h["step"], h[key]) for h in log_history if key in h and "step" in h]
            if pts:
                panels.append((label if key == keys[0] else f"{label} ({key})", pts))
                break
    if kind == "kto":  # chosen and rejected side by side is the figure KTO users read
        for key in ("rewards/rejected_sum", "rewards/rejected"):
            pts = [(h["step"], h[key]) for h in log_history if key in h]
            if pts:
                panels.append((key, pts))
                break
    if not panels:
        return None
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.2), squeeze=False)
    for ax, (label, pts) in zip(axes[0], panels):
        xs, ys = zip(*pts)
        ax.plot(xs, ys, marker="." if len(xs) < 50 else None)
        ax.set_title(label)
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def throughput(log_history: list[dict[str, Any]]) -> dict[str, float]:
    """Tokens trained and tokens/s of this session of the run, from the Trainer's log: TRL's
    `num_tokens` is gathered over all processes, so this is the total of the launch, not one rank's
    share. A resumed run's log starts with the earlier session's entries, and TRL counts again from 0
    after a resume while `train_runtime` is this session's: the count after the last restart is used."""
    counts = [float(h["num_tokens"]) for h in log_history if "num_tokens" in h]
    tokens = counts[-1] if counts else 0.0
    runtime = next((float(h["train_runtime"]) for h in reversed(log_history) if "train_runtime" in h), 0.0)
    if not tokens or runtime <= 0:
        return {}
    return {"tokens": tokens, "train_runtime_s": runtime, "tokens_per_s": tokens / runtime}


def finish_run(trainer, tokenizer, kind: str, output_dir: str | Path, title: str = "") -> dict[str, Any]:
    """Save model/adapter + tokenizer, the log history and the curves."""
    out = Path(output_dir)
    trainer.save_model(str(out))  # every process: ZeRO-3 gathers the shards for the save
    history = trainer.state.log_history
    png = None
    acc = getattr(trainer, "accelerator", None)
    if getattr(acc, "is_main_process", True):
        # one writer per file when several processes train (accelerate launch)
        tokenizer.save_pretrained(str(out))
        with open(out / "log_history.jsonl", "w") as fh:
            for h in history:
                fh.write(json.dumps(h) + "\n")
        png = plot_curves(history, kind, out / "curves.png", title=title)
    losses = [h["loss"] for h in history if "loss" in h]
    result = {"output_dir": str(out), "curves": str(png) if png else None, "steps": trainer.state.global_step,
              "first_loss": losses[0] if losses else None, "last_loss": losses[-1] if losses else None,
              "processes": int(getattr(acc, "num_processes", 1)), "rank": int(getattr(acc, "process_index", 0)),
              "distributed": str(getattr(acc, "distributed_type", "NO")).split(".")[-1]}
    result.update(throughput(history))
    return result

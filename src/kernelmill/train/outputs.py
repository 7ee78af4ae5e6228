"""What a training run leaves behind, and picking a run up again.

`output_dir/checkpoint-N/` are the Trainer's checkpoints (HF layout, with
optimizer and RNG state, so resuming is exact); the final model or adapter is
saved at the top of `output_dir` (`config.json` + weights, or
`adapter_config.json` + `adapter_model.safetensors`) with its tokenizer; the
log history goes to `log_history.jsonl` and the curves to `curves.png`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# what each recipe plots, first match per panel
CURVES = {
    "sft": [("loss", ["loss"]), ("eval loss", ["eval_loss"]), ("learning rate", ["learning_rate"])],
    "kto": [("loss", ["loss"]), ("rewards", ["rewards/chosen_sum", "rewards/chosen", "rewards/margins"]),
            ("KL", ["kl"])],
    "grpo": [("loss", ["loss"]), ("reward", ["reward"]), ("reward std", ["reward_std"])],
}


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


def finish_run(trainer, tokenizer, kind: str, output_dir: str | Path, title: str = "") -> dict[str, Any]:
    """Save model/adapter + tokenizer, the log history and the curves."""
    out = Path(output_dir)
    trainer.save_model(str(out))  # every process: ZeRO-3 gathers the shards for the save
    history = trainer.state.log_history
    png = None
    if getattr(getattr(trainer, "accelerator", None), "is_main_process", True):
        # one writer per file when several processes train (accelerate launch)
        tokenizer.save_pretrained(str(out))
        with open(out / "log_history.jsonl", "w") as fh:
            for h in history:
                fh.write(json.dumps(h) + "\n")
        png = plot_curves(history, kind, out / "curves.png", title=title)
    losses = [h["loss"] for h in history if "loss" in h]
    return {"output_dir": str(out), "curves": str(png) if png else None, "steps": trainer.state.global_step,
            "first_loss": losses[0] if losses else None, "last_loss": losses[-1] if losses else None}

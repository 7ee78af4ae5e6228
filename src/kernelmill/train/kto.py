"""KTO on the unpaired preference export (TileLang paper, stage 2).

KTO's weights assume a class balance: the KTO authors recommend
desirable_weight * n_desirable / (undesirable_weight * n_undesirable) in
[1, 4/3]. The TileLang recipe (pos:neg = 3:8, weights 3.0/2.0) sits at 0.56,
so we say so, with the weights that would restore the range, and go on.
"""

from __future__ import annotations

import logging
import warnings
from typing import Any

from .config import Recipe
from .data import load_dataset, load_rows
from .models import check_gpu_options, check_launch, load_model, load_tokenizer, peft_config, trl_args
from .outputs import finish_run, last_checkpoint

log = logging.getLogger(__name__)
BALANCE_RANGE = (1.0, 4.0 / 3.0)


def class_balance(n_desirable: int, n_undesirable: int, w_desirable: float, w_undesirable: float) -> str | None:
    """A warning text when the weighted class ratio is outside [1, 4/3], else None."""
    if n_desirable == 0 or n_undesirable == 0:
        which = "desirable" if n_desirable == 0 else "undesirable"
        return f"the KTO data has no {which} examples: KTO needs both labels"
    ratio = (w_desirable * n_desirable) / (w_undesirable * n_undesirable)
    lo, hi = BALANCE_RANGE
    if lo <= ratio <= hi:
        return None
    fix_lo = w_undesirable * n_undesirable / n_desirable
    return (f"KTO class balance: {n_desirable} desirable x {w_desirable} vs {n_undesirable} undesirable x "
            f"{w_undesirable} gives a weighted ratio of {ratio:.2f}, outside the recommended [1, 1.33]; "
            f"desirable_weight in [{fix_lo:.2f}, {fix_lo * hi:.2f}] would restore it")


def build_kto_trainer(recipe: Recipe):
    from trl import KTOTrainer

    check_gpu_options(recipe)
    rows = load_rows("kto", recipe.data.train, recipe.data.max_samples)
    args = trl_args(recipe)
    n_pos = sum(1 for r in rows if r["label"])
    msg = class_balance(n_pos, len(rows) - n_pos, args.desirable_weight, args.undesirable_weight)
    if msg and (n_pos == 0 or n_pos == len(rows)):
        raise ValueError(f"{recipe.data.train}: {msg}")
    if msg:
        warnings.warn(msg, stacklevel=2)
    train = load_dataset("kto", recipe.data.train, recipe.data.max_samples)
    evald = load_dataset("kto", recipe.data.eval) if recipe.data.eval else None
    tok = load_tokenizer(recipe.model)
    trainer = KTOTrainer(model=load_model(recipe), args=args, train_dataset=train, eval_dataset=evald,
                         processing_class=tok, peft_config=peft_config(recipe.lora))
    check_launch(trainer)
    return trainer, tok, msg


def run_kto(recipe: Recipe, resume: bool = True) -> dict[str, Any]:
    trainer, tok, balance = build_kto_trainer(recipe)
    ckpt = last_checkpoint(recipe.output_dir) if resume else None
    trainer.train(resume_from_checkpoint=ckpt)
    result = finish_run(trainer, tok, "kto", recipe.output_dir, title=f"KTO: {recipe.source}")
    result.update(resumed_from=ckpt, balance_warning=balance)
    return result

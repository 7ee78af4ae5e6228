"""Supervised fine-tuning (LoRA, QLoRA or full) on the conversational SFT export.

The loss is on the assistant turns only (reasoning + code), as in the
KernelCoder and PtxDec recipes; `masks.py` proves it on a real batch before
the first step. Packing and the rest are TRL's `SFTConfig` fields.
"""

from __future__ import annotations

import logging
from typing import Any

from .config import Recipe
from .data import load_dataset, load_rows
from .masks import check_trainer_mask, ensure_generation_markers
from .models import check_gpu_options, check_launch, load_model, load_tokenizer, peft_config, trl_args
from .outputs import finish_run, last_checkpoint

log = logging.getLogger(__name__)


def build_sft_trainer(recipe: Recipe):
    from trl import SFTTrainer

    check_gpu_options(recipe)
    if recipe.training.get("assistant_only_loss") is False:
        log.warning("training.assistant_only_loss is false: the loss includes system and user tokens")
    assistant_only = recipe.training.get("assistant_only_loss", True)
    rows = load_rows("sft", recipe.data.train, recipe.data.max_samples)
    train = load_dataset("sft", recipe.data.train, recipe.data.max_samples)
    evald = load_dataset("sft", recipe.data.eval) if recipe.data.eval else None
    tok = load_tokenizer(recipe.model)
    if assistant_only and ensure_generation_markers(tok, recipe.model.name_or_path):
        log.info("chat template patched with TRL's training template (generation markers)")
    args = trl_args(recipe, assistant_only_loss=assistant_only)
    trainer = SFTTrainer(model=load_model(recipe), args=args, train_dataset=train, eval_dataset=evald,
                         processing_class=tok, peft_config=peft_config(recipe.lora))
    check_launch(trainer)
    mask = check_trainer_mask(trainer, rows) if assistant_only else None
    return trainer, tok, mask


def run_sft(recipe: Recipe, resume: bool = True) -> dict[str, Any]:
    trainer, tok, mask = build_sft_trainer(recipe)
    ckpt = last_checkpoint(recipe.output_dir) if resume else None
    trainer.train(resume_from_checkpoint=ckpt)
    result = finish_run(trainer, tok, "sft", recipe.output_dir, title=f"SFT: {recipe.source}")
    result.update(resumed_from=ckpt, label_mask=mask)
    return result

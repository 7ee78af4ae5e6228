"""Checks that SFT trains on the assistant turn, all of it, and nothing else.

TRL builds the loss mask from the chat template's `{% generation %}` markers.
A template without them (most hub templates) yields an all-zero mask, and a
template with misplaced markers trains on the prompt; both look like a healthy
run in the logs. So before training we (1) make sure the template has markers
(TRL's patched template for known models, else a clear error) and (2) take a
real batch from the trainer's own collator and compare the trained tokens with
the assistant messages of the rows that went into it.
"""

from __future__ import annotations

from typing import Any


class LabelMaskError(RuntimeError):
    """The loss mask does not cover exactly the assistant turns."""


def ensure_generation_markers(tokenizer, model_name: str = "the model") -> bool:
    """Give the tokenizer a template with generation markers; True if patched."""
    from trl.chat_template_utils import get_training_chat_template, has_generation_markers

    if has_generation_markers(tokenizer.chat_template):
        return False
    try:
        patched = get_training_chat_template(tokenizer)
    except ValueError:
        patched = None
    if not patched:
        raise LabelMaskError(
            f"The chat template of {model_name} has no {{% generation %}} ... {{% endgeneration %}} markers, so "
            "the assistant-token mask would be empty and SFT would train on nothing (TRL cannot patch this "
            "template). Put the markers around the assistant content and its end-of-turn token, and point "
            "model.chat_template at that .jinja file.")
    tokenizer.chat_template = patched
    return True


def _runs(flags: list[bool]) -> list[tuple[int, int]]:
    runs, start = [], None
    for i, f in enumerate(flags + [False]):
        if f and start is None:
            start = i
        elif not f and start is not None:
            runs.append((start, i))
            start = None
    return runs


def _clean(text: str, specials: list[str]) -> str:
    for s in specials:
        text = text.replace(s, "")
    return text.strip()


def check_batch_mask(batch: dict[str, Any], tokenizer, rows: list[dict[str, Any]], packed: bool,
                     max_length: int | None = None) -> dict[str, int]:
    """Compare trained tokens (labels != -100) with the rows' assistant turns.

    Without packing, batch row i is dataset row i, so we also check coverage:
    every assistant message of an untruncated row is trained on. With packing
    rows are mixed, so each trained run must lie inside some assistant message.
    """
    labels = batch["labels"]
    ids = batch["input_ids"]
    trained_total = int((labels != -100).sum())
    if trained_total == 0:
        raise LabelMaskError(
            "No token in a real training batch is trained on (all labels are -100): the chat template's "
            "generation markers do not produce an assistant mask. Fix the template (model.chat_template).")
    specials = [t for t in tokenizer.all_special_tokens if t]
    assistant = [_clean(m["content"], specials) for r in rows for m in r["messages"] if m["role"] == "assistant"]
    for b in range(labels.shape[0]):
        flags = (labels[b] != -100).tolist()
        row_text = []
        for s, e in _runs(flags):
            text = _clean(tokenizer.decode(ids[b, s:e].tolist(), skip_special_tokens=False), specials)
            if not text:
                continue  # a lone end-of-turn token
            if not any(text in a for a in assistant):
                raise LabelMaskError(
                    f"The loss covers text outside the assistant turns (batch row {b}): {text[:120]!r}. "
                    "The chat template's {% generation %} markers are misplaced.")
            row_text.append(text)
        if packed or b >= len(rows):
            continue
        n_tokens = int((batch["attention_mask"][b] if "attention_mask" in batch else labels[b] != -100).sum())
        if max_length is not None and n_tokens >= max_length:
            continue  # truncated: the tail of the answer is legitimately absent
        joined = "\n".join(row_text)
        for m in rows[b]["messages"]:
            want = _clean(m["content"], specials)
            if m["role"] == "assistant" and want and want not in joined and \
                    not all(line.strip() in joined for line in want.splitlines()):
                raise LabelMaskError(
                    f"Part of an assistant turn is not trained on (batch row {b}): expected {want[:80]!r}, "
                    f"trained {joined[:80]!r}.")
    return {"trained_tokens": trained_total, "tokens": int(labels.numel())}


def check_trainer_mask(trainer, rows: list[dict[str, Any]], n: int = 4) -> dict[str, int]:
    """Run `check_batch_mask` on the first `n` rows, collated by the trainer."""
    dataset = trainer.train_dataset
    packed = bool(getattr(trainer.args, "packing", False))
    items = [dataset[i] for i in range(min(n, len(dataset)))]
    batch = trainer.data_collator(items)
    return check_batch_mask(batch, trainer.processing_class, rows, packed, trainer.args.max_length)

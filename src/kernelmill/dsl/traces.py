"""Post-hoc reasoning traces (paper 002, stage 2).

1. `trace_inputs`: for each verified kernel, the DSL's trace template (the one
   chat format) asks a model for the step-by-step reasoning that leads from
   the PyTorch program to the given kernel; send them with any `generate`
   backend, from as many models as the pool has (`generate(inputs, backend,
   spec.load_trace_template(), out)`; the trace is the reply's text).
2. `score_traces`: log P(trace | task) under the base model, batched: the
   prompt is the task prompt a model is trained and prompted with
   (`kernelmill.chat.export_prompt`, through the tokenizer's chat template when
   it has one), the trace is the assistant's reasoning; the score is the sum
   of the trace tokens' log-probabilities (`reduce="mean"`: per token).
3. `top_fraction`: keep the top quartile (paper: the traces the base model is
   most likely to produce).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

from ..chat import export_prompt
from ..generate import PromptInput


def trace_inputs(kernels: Sequence[dict[str, Any]]) -> list[PromptInput]:
    """One prompt per verified kernel ({task_id, task_code, code})."""
    return [PromptInput(k["task_id"], {"code": k["task_code"].strip(), "answer": k["code"].strip(),
                                       "task_id": k["task_id"], "name": k["task_id"]}) for k in kernels]


def prompt_text(messages: list[dict[str, str]], tokenizer) -> str:
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    return "".join(f"{m['role']}:\n{m['content']}\n\n" for m in messages) + "assistant:\n"


def task_prompt_for(row: dict[str, Any], language: str) -> list[dict[str, str]]:
    return export_prompt({"task_id": row["task_id"], "task_code": row["task_code"], "language": language})


@dataclass
class ScoredTrace:
    index: int
    logprob: float
    tokens: int


def score_traces(model, tokenizer, prompts: Sequence[str], traces: Sequence[str], batch_size: int = 8,
                 reduce: str = "sum", max_length: int | None = None) -> list[ScoredTrace]:
    """log P(trace | prompt) for each pair, in batches (right padding, so the
    positions of real tokens are those of an unpadded run)."""
    import torch

    if len(prompts) != len(traces):
        raise ValueError(f"{len(prompts)} prompts but {len(traces)} traces")
    if reduce not in ("sum", "mean"):
        raise ValueError("reduce must be 'sum' or 'mean'")
    device = next(model.parameters()).device
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (tokenizer.eos_token_id or 0)
    rows = []
    for p, t in zip(prompts, traces):
        pi = tokenizer(p, add_special_tokens=False)["input_ids"]
        ti = tokenizer(t, add_special_tokens=False)["input_ids"]
        if not pi and tokenizer.bos_token_id is not None:
            pi = [tokenizer.bos_token_id]
        ids = pi + ti
        if max_length and len(ids) > max_length:
            cut = len(ids) - max_length  # keep the whole trace, cut the prompt's start
            ids, pi = ids[cut:], pi[cut:]
        rows.append((ids, len(pi)))
    out: list[ScoredTrace] = []
    order = sorted(range(len(rows)), key=lambda i: len(rows[i][0]))  # similar lengths share a batch
    for start in range(0, len(order), batch_size):
        idx = order[start:start + batch_size]
        width = max(len(rows[i][0]) for i in idx)
        ids = torch.full((len(idx), width), pad, dtype=torch.long)
        mask = torch.zeros((len(idx), width), dtype=torch.long)
        for b, i in enumerate(idx):
            seq = rows[i][0]
            ids[b, : len(seq)] = torch.tensor(seq)
            mask[b, : len(seq)] = 1
        with torch.no_grad():
            logits = model(input_ids=ids.to(device), attention_mask=mask.to(device)).logits.float()
        logp = torch.log_softmax(logits[:, :-1], dim=-1)
        tok_lp = logp.gather(-1, ids[:, 1:].to(device).unsqueeze(-1)).squeeze(-1).cpu()
        for b, i in enumerate(idx):
            seq, n_prompt = rows[i]
            span = tok_lp[b, max(n_prompt - 1, 0): len(seq) - 1]  # predictions of the trace tokens
            n = int(span.numel())
            total = float(span.sum()) if n else -math.inf
            out.append(ScoredTrace(i, total / n if (reduce == "mean" and n) else total, n))
    return sorted(out, key=lambda s: s.index)


def top_fraction(scores: Sequence[float], fraction: float = 0.25) -> list[int]:
    """Indices of the top `fraction` by score (at least one when there are
    scores), best first; ties keep the earlier index."""
    if not 0 < fraction <= 1:
        raise ValueError("fraction must be in (0, 1]")
    if not scores:
        return []
    n = max(1, math.ceil(len(scores) * fraction))
    return sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:n]


def load_base_model(name: str, device: str | None = None, dtype: str = "auto"):
    """(model, tokenizer) of a causal LM by name or path; on the GPU when there is one."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    tok = AutoTokenizer.from_pretrained(name)
    model = AutoModelForCausalLM.from_pretrained(name, dtype=dtype).to(device).eval()
    return model, tok

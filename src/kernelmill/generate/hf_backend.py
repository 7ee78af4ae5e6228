"""Local generation with transformers `generate` (small models, tests, CPUs).

Requests are batched (left padding); a batch shares one random seed, the
seed of its first request, so use `batch_size=1` for per-sample seeds. The
finish reason is `stop` when the model emitted its end token and `length`
when it ran into `max_tokens`, the same meaning servers give it.
"""

from __future__ import annotations

from typing import Any, Sequence

from .backend import BackendError, ChatRequest, Completion, GenerationStats, OnDone, run_blocking_batches


def _transformers():
    try:
        import transformers
    except ImportError:
        raise BackendError("the hf backend needs transformers: pip install 'kernelmill[generate]'") from None
    return transformers


def load_tokenizer(path: str):
    try:
        return _transformers().AutoTokenizer.from_pretrained(path)
    except (OSError, ValueError) as exc:
        raise BackendError(f"cannot load a tokenizer from {path!r}: {exc}") from None


def render_chat(tokenizer, messages: list[dict[str, str]]) -> str:
    """The model's own chat template when it has one; else a plain transcript
    (base models and test models have no template)."""
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    parts = [f"{m['role'].capitalize()}: {m['content']}" for m in messages]
    return "\n\n".join(parts) + "\n\nAssistant:"


class HFBackend:
    name = "hf"

    def __init__(self, model: str, batch_size: int = 4, device: str = "auto", dtype: str = "auto",
                 tokenizer: str | None = None):
        tf = _transformers()
        import torch

        self.model = model
        self.batch_size = max(1, batch_size)
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = device
        self.tokenizer = load_tokenizer(tokenizer or model)
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        try:
            torch_dtype: Any = dtype if dtype == "auto" else getattr(torch, dtype)
            self._model = tf.AutoModelForCausalLM.from_pretrained(model, dtype=torch_dtype).to(device)
        except (OSError, ValueError) as exc:
            raise BackendError(f"cannot load a causal LM from {model!r}: {exc}") from None
        self._model.eval()

    async def check(self) -> None:
        return None  # loading in __init__ already failed loudly if it could

    def count_tokens(self, text: str) -> int | None:
        return len(self.tokenizer.encode(text, add_special_tokens=False))

    def _generate_batch(self, batch: list[ChatRequest]) -> list[Completion]:
        import torch

        tok = self.tokenizer
        texts = [render_chat(tok, r.messages) for r in batch]
        enc = tok(texts, return_tensors="pt", padding=True, add_special_tokens=False).to(self.device)
        p = batch[0].params
        if p.seed is not None:
            torch.manual_seed(p.seed)
        kwargs: dict[str, Any] = {"max_new_tokens": p.max_tokens, "pad_token_id": tok.pad_token_id}
        if p.temperature > 0:
            kwargs.update(do_sample=True, temperature=p.temperature, top_p=p.top_p)
        else:
            kwargs.update(do_sample=False)
        with torch.no_grad():
            out = self._model.generate(**enc, **kwargs)
        n_in = enc["input_ids"].shape[1]
        eos = self._eos_ids()
        results = []
        for i in range(len(batch)):
            gen = out[i, n_in:].tolist()
            stop = next((j for j, t in enumerate(gen) if t in eos), None)
            if stop is not None:
                gen, finish = gen[:stop + 1], "stop"
            else:
                # generate() pads finished rows; a row without an end token ran to the limit
                finish = "length"
            text = tok.decode(gen, skip_special_tokens=True)
            prompt_tokens = int(enc["attention_mask"][i].sum())
            results.append(Completion(content=text, finish_reason=finish, model=self.model,
                                      usage={"prompt_tokens": prompt_tokens, "completion_tokens": len(gen),
                                             "total_tokens": prompt_tokens + len(gen)}))
        return results

    def _eos_ids(self) -> set[int]:
        ids = self._model.generation_config.eos_token_id
        if ids is None:
            ids = self.tokenizer.eos_token_id
        if ids is None:
            return set()
        return set(ids) if isinstance(ids, (list, tuple)) else {int(ids)}

    async def complete_all(self, requests: Sequence[ChatRequest], on_done: OnDone,
                           stats: GenerationStats | None = None) -> None:
        await run_blocking_batches(requests, on_done, self.batch_size, self._generate_batch, stats)

    async def aclose(self) -> None:
        return None

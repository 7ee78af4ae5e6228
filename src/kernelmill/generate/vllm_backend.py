"""Offline generation with `vllm.LLM` (optional: pip install 'kernelmill[vllm]').

vLLM schedules its own batches; we hand it chunks of `chunk_size` requests so
results reach the output file as each chunk finishes. Per-request seeds are
passed through, so a resumed run draws the same samples.
"""

from __future__ import annotations

from typing import Any, Sequence

from .backend import BackendError, ChatRequest, Completion, GenerationStats, OnDone, run_blocking_batches


class VLLMBackend:
    name = "vllm"

    def __init__(self, model: str, chunk_size: int = 256, tensor_parallel_size: int = 1,
                 max_model_len: int | None = None, gpu_memory_utilization: float = 0.9,
                 **llm_kwargs: Any):
        try:
            import vllm
        except ImportError:
            raise BackendError("the vllm backend needs vllm: pip install 'kernelmill[vllm]' "
                               "(or serve the model with `vllm serve` and use --backend openai)") from None
        self._vllm = vllm
        self.model = model
        self.chunk_size = max(1, chunk_size)
        kwargs = dict(model=model, tensor_parallel_size=tensor_parallel_size,
                      gpu_memory_utilization=gpu_memory_utilization, **llm_kwargs)
        if max_model_len:
            kwargs["max_model_len"] = max_model_len
        self._llm = vllm.LLM(**kwargs)
        self._tokenizer = self._llm.get_tokenizer()

    async def check(self) -> None:
        return None

    def count_tokens(self, text: str) -> int | None:
        return len(self._tokenizer.encode(text, add_special_tokens=False))

    def _generate_batch(self, batch: list[ChatRequest]) -> list[Completion]:
        params = [self._vllm.SamplingParams(n=1, temperature=r.params.temperature, top_p=r.params.top_p,
                                            max_tokens=r.params.max_tokens, seed=r.params.seed) for r in batch]
        outs = self._llm.chat([r.messages for r in batch], sampling_params=params, use_tqdm=False)
        results = []
        for out in outs:
            o = out.outputs[0]
            n_prompt = len(out.prompt_token_ids or [])
            n_out = len(o.token_ids)
            results.append(Completion(content=o.text, finish_reason=o.finish_reason, model=self.model,
                                      usage={"prompt_tokens": n_prompt, "completion_tokens": n_out,
                                             "total_tokens": n_prompt + n_out}))
        return results

    async def complete_all(self, requests: Sequence[ChatRequest], on_done: OnDone,
                           stats: GenerationStats | None = None) -> None:
        await run_blocking_batches(requests, on_done, self.chunk_size, self._generate_batch, stats)

    async def aclose(self) -> None:
        return None

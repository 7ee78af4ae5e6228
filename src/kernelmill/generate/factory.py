"""Backends by name (`make_backend`): the one module that knows every backend, so the
backends' shared records (`backend.py`) import none of them."""

from __future__ import annotations

from typing import Any

from .backend import BACKENDS, Backend


def make_backend(name: str, model: str, **options: Any) -> Backend:
    """Build a backend by name; heavy imports happen only for the one chosen."""
    if name == "openai":
        from .openai_client import OpenAIBackend

        return OpenAIBackend(model=model, **options)
    if name == "hf":
        from .hf_backend import HFBackend

        return HFBackend(model=model, **options)
    if name == "vllm":
        from .vllm_backend import VLLMBackend

        return VLLMBackend(model=model, **options)
    raise ValueError(f"unknown backend {name!r} (choose from {', '.join(BACKENDS)})")

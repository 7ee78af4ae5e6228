"""Prompt rendering for exports, and how to plug in another renderer.

Exports take `render_prompt(task_code, language) -> list[message]` (the
system and user turns). The default below is kernelmill's own short
instruction, written from SPEC.md section 1's description of the inference
prompt. When the generation templates (`kernelmill.generate.prompts`) exist,
point exports at them so training and inference see the same text:
`--prompt-fn kernelmill.generate.prompts:SOME_FUNCTION` on the CLI, or
`render_prompt=` in Python; `load_renderer` resolves such a spec.
"""

from __future__ import annotations

import importlib
from typing import Callable

Message = dict[str, str]
PromptRenderer = Callable[[str, str], list[Message]]

_LANGUAGE_NAMES = {"cuda": "CUDA", "triton": "Triton", "tilelang": "TileLang", "cpp": "C++", "torch": "PyTorch"}

SYSTEM = ("You are an expert in writing fast GPU kernels. You replace PyTorch operators with custom "
          "kernels to make programs faster while computing the same result.")


def default_prompt(task_code: str, language: str = "cuda") -> list[Message]:
    lang = _LANGUAGE_NAMES.get(language, language)
    user = (
        f"Rewrite the PyTorch program below with custom {lang} kernels so that it runs faster. "
        "You choose which operators to replace; fusing several operators into one kernel and "
        "changing the algorithm are allowed. Embed the kernels inline so the file runs on its own "
        f"(for CUDA, compile them with torch.utils.cpp_extension.load_inline).\n\n"
        f"Program to optimize:\n```python\n{task_code.rstrip()}\n```\n\n"
        "Name the optimized module `ModelNew`, keep the same constructor and forward arguments, "
        "and answer with the complete code in one ```python code block. The code must compile "
        "and run; do not leave placeholders."
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def load_renderer(spec: str | None) -> PromptRenderer:
    """`module:function` -> the function; None or 'default' -> `default_prompt`."""
    if not spec or spec == "default":
        return default_prompt
    module_name, _, attr = spec.partition(":")
    if not attr:
        raise ValueError(f"prompt function {spec!r}: expected 'module:function'")
    try:
        fn = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"prompt function {spec!r} cannot be loaded: {exc}") from None
    if not callable(fn):
        raise ValueError(f"prompt function {spec!r} is not callable")
    return fn

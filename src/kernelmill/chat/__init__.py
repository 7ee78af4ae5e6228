"""The chat format, one definition for every stage: the prompt `generate` sends,
the reply it parses, the feedback turn of `refine`, and the turns every export
trains on (SFT, KTO, GRPO).

* `task_prompt(task, template, examples)`: the system and user turns for a task,
  from the templates in `chat/templates/` (docs/generate.md). `generate` renders
  its requests with it, and `export_prompt` renders an export row's prompt with
  the same template and few-shot example, so a model is trained on exactly the
  text it is prompted with (tests/chat/test_one_format.py renders both).
* `assistant_turn(code, reasoning)`: the assistant's turn as a model writes it:
  `<think>` block (when there is reasoning), then the code in a ```python block;
  `parse_completion` (chat/parsing.py) reads that shape back.
* `feedback_message` (chat/feedback.py): the user turn after an attempt.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable

from ..records import Task
from .feedback import DEFAULT_MAX_CHARS, feedback_message
from .parsing import LANGUAGE_TAGS, ParsedCompletion, code_blocks, extract_code, parse_completion, split_reasoning
from .prompts import (TEMPLATES_DIR, FewShotExample, PromptTemplate, TemplateError, fewshot_example, list_templates,
                      load_template, ptx_variables, render_prompt, task_prompt, task_variables, template_for)

Message = dict[str, str]
PromptRenderer = Callable[[str, str], list[Message]]


def assistant_turn(code: str, reasoning: str | None = None, answer: str | None = None) -> str:
    """The assistant's text: a think block when there is reasoning, then the
    answer (`answer` as the model wrote it, else the code in a python block)."""
    text = answer if answer else f"```python\n{code.rstrip()}\n```"
    if reasoning and reasoning.strip():
        return f"<think>\n{reasoning.strip()}\n</think>\n\n{text}"
    return text


def export_prompt(row: dict[str, Any], examples: str = "builtin") -> list[Message]:
    """The prompt of an export row (a curated row or a sample joined with its
    task): `task_prompt` for the row's task with the template its sample was
    generated with (`meta.template`, when shipped) or its language's, and the
    few-shot source it recorded (`meta.example` == "fallback")."""
    meta = row.get("meta") or {}
    if meta.get("example") == "fallback":
        examples = "fallback"
    task = Task(str(row.get("task_id") or ""), row["task_code"], name=str(row.get("task_name") or ""))
    return task_prompt(task, template_for(row.get("language") or "cuda", meta.get("template")), examples)


def load_renderer(spec: str | None) -> Callable[[dict[str, Any]], list[Message]]:
    """The prompt renderer of an export: None or 'default' -> `export_prompt`
    (the generation templates); 'module:function' -> that function, called as
    `function(task_code, language)`."""
    if not spec or spec == "default":
        return export_prompt
    module_name, _, attr = spec.partition(":")
    if not attr:
        raise ValueError(f"prompt function {spec!r}: expected 'module:function'")
    try:
        fn = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"prompt function {spec!r} cannot be loaded: {exc}") from None
    if not callable(fn):
        raise ValueError(f"prompt function {spec!r} is not callable")
    return lambda row: fn(row["task_code"], row.get("language") or "cuda")


__all__ = [
    "DEFAULT_MAX_CHARS", "FewShotExample", "LANGUAGE_TAGS", "Message", "ParsedCompletion", "PromptRenderer",
    "PromptTemplate", "TEMPLATES_DIR", "TemplateError", "assistant_turn", "code_blocks", "export_prompt",
    "extract_code", "feedback_message", "fewshot_example", "list_templates", "load_renderer", "load_template",
    "parse_completion", "ptx_variables", "render_prompt", "split_reasoning", "task_prompt", "task_variables",
    "template_for",
]

"""The in-context prompt of the bootstrap loop, in the project's one chat
format: the DSL's RAG template (`spec.rag_template`, a `kernelmill.chat`
template) rendered with the task, its feature summary and the retrieved
kernels. `generate` sends it as it sends any template's prompt, and parses the
reply with the template's `code_tags` and `require`."""

from __future__ import annotations

from typing import Sequence

from ..chat import PromptTemplate
from ..generate import PromptInput
from ..records import Task
from .retrieval import Retrieved


def format_examples(retrieved: Sequence[Retrieved], label: str) -> str:
    """Retrieved kernels as in-context examples: the PyTorch program, then the
    verified kernel, most similar first."""
    if not retrieved:
        return "(no verified examples yet)"
    parts = []
    for i, r in enumerate(retrieved, 1):
        e = r.entry
        parts.append(
            f"Example {i} (task {e.task_id}, similarity {r.score:.3f}).\n\nThe PyTorch module:\n\n"
            f"```python\n{e.task_code.strip()}\n```\n\nThe same module in {label}:\n\n```python\n{e.code.strip()}\n```")
    return "\n\n".join(parts)


def rag_variables(task: Task, features: str, retrieved: Sequence[Retrieved], label: str) -> dict[str, str]:
    return {"code": task.code.strip(), "task_id": task.task_id, "name": task.name or task.task_id,
            "features": features, "examples": format_examples(retrieved, label)}


def rag_input(task: Task, features: str, retrieved: Sequence[Retrieved], label: str) -> PromptInput:
    return PromptInput(task.task_id, rag_variables(task, features, retrieved, label))


def rag_messages(template: PromptTemplate, task: Task, features: str, retrieved: Sequence[Retrieved],
                 label: str) -> list[dict[str, str]]:
    return template.render(rag_variables(task, features, retrieved, label))

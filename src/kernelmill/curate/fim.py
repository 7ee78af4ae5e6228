"""Prompt/completion pairs for SPEC.md section 4's CSV splits.

* FIM: each `@triton.jit` function of a Triton sample becomes one pair:
  prompt = everything before the function body (imports, constants, earlier
  helpers, decorators, the signature and its docstring), completion = the body.
  Found with Python's `ast`, so a function is cut exactly where its body starts.
* Translation: per task, the fastest correct CUDA sample and the fastest
  correct Triton sample form one CUDA -> Triton pair.
"""

from __future__ import annotations

import ast
from typing import Any


def _is_triton_jit(dec: ast.expr) -> bool:
    node = dec.func if isinstance(dec, ast.Call) else dec
    if isinstance(node, ast.Attribute):
        return node.attr == "jit" and isinstance(node.value, ast.Name) and node.value.id in ("triton", "tl")
    return isinstance(node, ast.Name) and node.id == "jit"


def fim_pairs(code: str) -> list[tuple[str, str, str]]:
    """(function name, prompt, completion) for each jitted function.
    Raises SyntaxError when the code does not parse."""
    tree = ast.parse(code)
    lines = code.splitlines(keepends=True)
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef) or not any(_is_triton_jit(d) for d in node.decorator_list):
            continue
        body = node.body
        # keep a docstring in the prompt: it is context, not the kernel's work
        if (len(body) > 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            body = body[1:]
        start = body[0].lineno - 1
        end = node.end_lineno or len(lines)
        prompt = "".join(lines[:start])
        completion = "".join(lines[start:end])
        if completion.strip():
            out.append((node.name, prompt, completion))
    return out


def _best(rows: list[dict[str, Any]]) -> dict[str, Any]:
    def key(r):
        sp = r.get("speedup")
        return (-(sp if isinstance(sp, (int, float)) else float("-inf")), str(r.get("sample_id", "")))
    return min(rows, key=key)


TRANSLATE_INSTRUCTION = ("Translate this CUDA implementation (PyTorch module with inline CUDA kernels) "
                         "into an equivalent Triton implementation named ModelNew.\n\n")


def translation_pairs(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One CUDA -> Triton pair per task that has both (correct when known)."""
    by_task: dict[str, dict[str, list]] = {}
    for r in rows:
        if r.get("correct") is False:
            continue
        lang = r.get("language")
        if lang in ("cuda", "triton"):
            by_task.setdefault(str(r.get("task_id")), {"cuda": [], "triton": []})[lang].append(r)
    out = []
    for task_id in sorted(by_task):
        group = by_task[task_id]
        if group["cuda"] and group["triton"]:
            c, t = _best(group["cuda"]), _best(group["triton"])
            out.append({"prompt": TRANSLATE_INSTRUCTION + "```python\n" + c["code"].rstrip() + "\n```\n",
                        "completion": t["code"], "task_id": task_id,
                        "cuda_sample_id": c.get("sample_id"), "triton_sample_id": t.get("sample_id")})
    return out

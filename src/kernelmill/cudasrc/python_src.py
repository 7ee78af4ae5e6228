"""The CUDA inside KernelBench-style Python candidates, found statically.

A candidate builds its extension with `load_inline(..., cuda_sources=X)` (or X as
the third positional argument); X is a string literal, a name bound to one, a
list or sum of those, or `textwrap.dedent(...)` / `.strip()` of one. Anything
else (a file read, a format call) raises CudaExtractError, which the pair
builder reports as a failed file. The file is parsed with `ast` and never executed.
"""

from __future__ import annotations

import ast
import textwrap

from .inline_calls import inline_calls


class CudaExtractError(ValueError):
    """Names the file and line of what could not be resolved."""


def _resolve(node, names: dict[str, ast.AST], where: str, depth: int = 0) -> list[str]:
    if depth > 8:
        raise CudaExtractError(f"{where}:{node.lineno}: cuda_sources is defined too indirectly")
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.List, ast.Tuple)):
        return [s for e in node.elts for s in _resolve(e, names, where, depth + 1)]
    if isinstance(node, ast.Name) and node.id in names:
        return _resolve(names[node.id], names, where, depth + 1)
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
        if name == "dedent":
            return [textwrap.dedent(x) for x in _resolve(node.args[0], names, where, depth + 1)]
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args
            and node.func.attr in ("strip", "lstrip", "rstrip") and not node.keywords):
        return [getattr(x, node.func.attr)() for x in _resolve(node.func.value, names, where, depth + 1)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left = _resolve(node.left, names, where, depth + 1)
        right = _resolve(node.right, names, where, depth + 1)
        return ["".join(left) + "".join(right)]
    raise CudaExtractError(
        f"{where}:{getattr(node, 'lineno', 0)}: cuda_sources is not a string literal "
        f"(found {ast.dump(node)[:60]}); only literals and names bound to literals are read")


def cuda_sources_from_python(code: str, where: str = "<candidate>") -> list[str]:
    """Every CUDA source string passed to `load_inline` in `code` (may be empty)."""
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        raise CudaExtractError(f"{where}:{exc.lineno}: not valid Python: {exc.msg}") from None
    names: dict[str, ast.AST] = {}
    for st in ast.walk(tree):
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
            names[st.targets[0].id] = st.value
        elif isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and st.value is not None:
            names[st.target.id] = st.value
    out: list[str] = []
    for found in inline_calls(tree):
        if "cuda_sources" in found.arguments:
            out.extend(_resolve(found.arguments["cuda_sources"], names, where))
    return out

"""The one reader of `torch.utils.cpp_extension.load_inline` calls in a candidate's source.

Every tool that reads these calls without running the code goes through `inline_calls`:
the build's header preparation (verify/build/build_prepare.py), the lazy builds
(verify/build/lazy_builds.py), the CUDA sources of `ptx pairs` (cudasrc/python_src.py) and
the builtin tasks' nvcc check (tasks/builtin/nvcc_check.py). Each call comes with its
arguments by load_inline's own parameter names (positional ones named) and the function
bodies it sits in; how to evaluate an argument is each tool's business.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

# load_inline's parameters in order (torch >= 2.7, which added sycl_sources fourth): a
# positional argument is named by its place here
PARAMETERS = ("name", "cpp_sources", "cuda_sources", "sycl_sources", "functions", "extra_cflags",
              "extra_cuda_cflags", "extra_sycl_cflags", "extra_ldflags", "extra_include_paths",
              "build_directory", "verbose", "with_cuda", "with_sycl", "is_python_module",
              "with_pytorch_error_handling", "keep_intermediates", "use_pch", "no_implicit_headers")


@dataclass
class InlineCall:
    call: ast.Call
    arguments: dict[str, ast.AST]  # by parameter name; positional ones named by PARAMETERS
    scopes: list[ast.AST] = field(default_factory=list)  # enclosing functions/lambdas, outermost first
    star_kwargs: bool = False  # a ``**kwargs`` whose names cannot be read

    @property
    def line(self) -> int:
        return self.call.lineno

    @property
    def lazy(self) -> bool:
        """Inside a function body: the module's import does not run it."""
        return bool(self.scopes)


def is_load_inline(func: ast.AST) -> bool:
    """``load_inline(...)`` or ``anything.load_inline(...)``."""
    if isinstance(func, ast.Name):
        return func.id == "load_inline"
    return isinstance(func, ast.Attribute) and func.attr == "load_inline"


def inline_calls(source: str | ast.AST) -> list[InlineCall]:
    """Every ``load_inline`` call of `source` (text or a parsed tree), in source order;
    none for text that does not parse."""
    if isinstance(source, str):
        try:
            source = ast.parse(source)
        except (SyntaxError, ValueError):
            return []
    found: list[InlineCall] = []

    def visit(node: ast.AST, scopes: list[ast.AST]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                visit(child, scopes + [child])
                continue
            if isinstance(child, ast.Call) and is_load_inline(child.func):
                args = {PARAMETERS[i]: a for i, a in enumerate(child.args[:len(PARAMETERS)])}
                args.update({k.arg: k.value for k in child.keywords if k.arg is not None})
                found.append(InlineCall(child, args, scopes, any(k.arg is None for k in child.keywords)))
            visit(child, scopes)

    visit(source, [])
    found.sort(key=lambda c: (c.call.lineno, c.call.col_offset))
    return found

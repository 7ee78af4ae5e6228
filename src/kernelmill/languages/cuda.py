"""CUDA C++ through torch's `load_inline` (or the candidate's own extension module)."""

from __future__ import annotations

import ast
import re

from .base import Language

_GLOBAL = re.compile(r"__global__\s+[\w:<>,\s\*]*?\b(\w+)\s*\(")
_BOUNDS = re.compile(r"__launch_bounds__\s*\([^)]*\)")


def global_functions(tree: ast.AST) -> set[str]:
    """`__global__` functions in the source's string constants (load_inline's sources)."""
    names = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and "__global__" in n.value:
            names.update(_GLOBAL.findall(_BOUNDS.sub(" ", n.value)))
    return names


class Cuda(Language):
    def own_kernel_names(self, tree: ast.AST) -> set[str]:
        return global_functions(tree)


LANGUAGE = Cuda("cuda", compiles_extension=True, needs_gpu=True)

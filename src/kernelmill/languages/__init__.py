"""Kernel languages: all that the harness knows of each, one module per language.

Each module beside this one (`torch`, `cuda`, `cpp`, `triton`, `tilelang`, `cute_dsl`) defines
``LANGUAGE``, a `Language` (languages/base.py): how its candidates build and run (their
environment, device, whether their timings mean anything), what counts as their own
kernels for the fallback guard and the provenance, their version. Adding a language is
adding one module here (found by its file; nothing else names it) and its tests.

    from kernelmill.languages import get_language
    get_language("triton").unsupported("cpu")
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
from typing import Any

from .base import Language


def _load() -> dict[str, Language]:
    found = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name == "base":
            continue
        lang = getattr(importlib.import_module(f"{__name__}.{info.name}"), "LANGUAGE", None)
        if isinstance(lang, Language):
            found[lang.name] = lang
    return found


ALL: dict[str, Language] = _load()


def get_language(name: str) -> Language | None:
    return ALL.get(name)


def run_device_of(name: str, device: str) -> str:
    """Where a candidate of language `name` runs on a run of `device` (a CPU-only language on
    the CPU whatever the run's device; a language this harness does not know: `device`, its
    verdict says so)."""
    lang = ALL.get(name)
    return lang.run_device(device) if lang is not None else device


def own_kernel_names(code: str) -> frozenset[str]:
    """The kernels a candidate's source defines, in any language (CUDA `__global__`
    functions in its strings, Triton, TileLang and CuTe DSL kernel functions)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return frozenset()
    return frozenset(n for lang in ALL.values() for n in lang.own_kernel_names(tree))


def is_own_symbol(base: str, own: frozenset[str]) -> bool:
    """Whether a kernel symbol's base name is an own kernel's in some language's mangling."""
    return base in own or any(lang.is_own_symbol(base, own) for lang in ALL.values())


def own_callables(module: Any) -> list[Any]:
    """The candidate module's objects that launch its own kernels, in any language."""
    return [obj for lang in ALL.values() for obj in lang.own_callables(module)]


def kernel_codes() -> set[Any]:
    """Code objects that run a language's kernels made at run time."""
    return set().union(*(lang.kernel_codes() for lang in ALL.values()))


def versions() -> dict[str, str | None]:
    """{language: installed version} for the languages that are packages."""
    return {name: lang.version() for name, lang in ALL.items() if type(lang).version is not Language.version}


def protected_modules() -> set[str]:
    return {m for lang in ALL.values() for m in lang.protected_modules}


def kernel_origins() -> list[tuple[str, str]]:
    return [o for lang in ALL.values() for o in lang.kernel_origins]


def import_env(device: str) -> dict[str, str]:
    """What every language's package reads at import on `device` (Language.import_env)."""
    return {k: v for lang in ALL.values() for k, v in lang.import_env(device).items()}


def warm_imports() -> None:
    for lang in ALL.values():
        lang.warm_import()


__all__ = ["ALL", "Language", "get_language", "import_env", "run_device_of", "is_own_symbol", "kernel_codes", "kernel_origins", "own_callables", "own_kernel_names",
           "protected_modules", "versions", "warm_imports"]

"""C++ extensions on the CPU through torch's `load_inline`."""

from __future__ import annotations

from .base import Language

LANGUAGE = Language("cpp", compiles_extension=True, cpu_only=True)

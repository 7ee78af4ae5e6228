"""PyTorch rewrites: no kernel of their own, nothing to build."""

from __future__ import annotations

from .base import Language

LANGUAGE = Language("torch", compiles_extension=False)

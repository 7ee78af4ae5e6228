"""Metrics tables, figures and reports (loaded on first use: `kernelmill --help` imports
this package's commands without numpy or torch)."""

from __future__ import annotations

import importlib

_WHERE = {"MetricSet": "metrics", "compute": "metrics", "metrics_by_level": "metrics", "pass_at_k": "metrics"}

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    if name in _WHERE:
        value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

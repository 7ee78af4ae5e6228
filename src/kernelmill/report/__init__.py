"""Metrics tables, figures and reports (loaded on first use: `kernelmill --help` imports
this package's commands without numpy or torch)."""

from __future__ import annotations

from ..lazy import lazy_face

_WHERE = {"MetricSet": "metrics", "compute": "metrics", "metrics_by_level": "metrics", "pass_at_k": "metrics"}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)

"""Metrics tables, figures and reports."""

from .metrics import MetricSet, compute, metrics_by_level, pass_at_k

__all__ = ["MetricSet", "compute", "metrics_by_level", "pass_at_k"]

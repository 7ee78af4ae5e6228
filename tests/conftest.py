"""Shared test configuration: GPU tests run only where CUDA is present."""

from __future__ import annotations

import pytest


def _has_cuda() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except Exception:
        return False


def pytest_collection_modifyitems(config, items):
    if _has_cuda():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU (runs on the device machine)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)

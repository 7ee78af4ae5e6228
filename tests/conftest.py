"""Shared test configuration: GPU tests run only where CUDA is present."""

from __future__ import annotations

import os

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


@pytest.fixture(scope="session")
def shared_build_cache(tmp_path_factory) -> str:
    """One build cache for the whole test session. Entries are content-addressed,
    so sharing is safe, and each candidate and precompiled header is built once
    however many tests verify it (a GPU build costs seconds of device time; a
    precompiled torch header a minute of a CI core and half a gigabyte of disk).

    A verifier's cache folder (VerifyConfig.cache_dir, KERNELMILL_CACHE) also holds
    per-candidate folders (work/, ext/); those stay per xdist worker. Its build/
    folder, the content-addressed BuildCache (one flock per key, entries published
    by rename: made for many processes at once), is one for all the workers of a run."""
    cache = tmp_path_factory.mktemp("build-cache")
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:  # basetemp is <run's folder>/<worker>: the run's folder is the workers' common parent
        common = tmp_path_factory.getbasetemp().parent / "build-cache-shared"
        common.mkdir(exist_ok=True)
        (cache / "build").symlink_to(common, target_is_directory=True)
    return str(cache)


@pytest.fixture(scope="session")
def chromium(tmp_path_factory):
    """A real headless Chromium (tests/browser_cdp.py), installed from Debian's package
    when the machine has none: the report's and the audit's pages are driven in it."""
    from browser_cdp import Browser, find_or_install_chromium

    path, why = find_or_install_chromium(log=tmp_path_factory.mktemp("chromium") / "install.log")
    if path is None:
        pytest.skip(f"no headless Chromium: {why}")
    browser = Browser(path)
    yield browser
    browser.close()

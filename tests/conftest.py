"""Shared test configuration: GPU tests run only where CUDA is present; under
pytest-xdist the longest files start first."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

# seconds each test file took in a whole run (benchmarks/suite_time.py writes it): under
# `-n 2 --dist loadfile` the files go out longest first, so that no long file starts last
# and runs alone while the other worker idles (xdist's own order is by number of tests)
WEIGHTS = Path(__file__).parent / "file_weights.json"


def pytest_configure(config):
    if hasattr(config.option, "loadscopereorder"):  # pytest-xdist: keep the order given below
        config.option.loadscopereorder = False


def _has_cuda() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except Exception:
        return False


def _longest_files_first(items) -> None:
    try:
        weights = json.loads(WEIGHTS.read_text())
    except (OSError, ValueError):
        return
    # a file not in the table (a new one) counts as a short one; the sort is stable, so a
    # file's tests keep their order
    items.sort(key=lambda item: -float(weights.get(item.nodeid.split("::")[0], 0.0)))


def pytest_collection_modifyitems(config, items):
    _longest_files_first(items)
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


# the flag set of a C++ extension built with no extra flags on a CPU: the suite's commonest
# the flag sets the suite's C++ builds use, each with build_prepare's options: the plain one
# (the guard corpora, the slim units, fail-fast) with every header, and the builtin C++
# candidates' -O3 (built by the demo, the honest corpus and the builtin-candidate tests in the
# shared cache; without a header of their own they compiled torch's headers plain, ~55 CPU-s a
# unit, and their runs started the header in the background) with torch/extension.h only:
# its torch/types.h header (~60 CPU-s) would serve two slim units of ~12 CPU-s saved each
SEED_SPECS = [([[False, [], []]], []), ([[False, ["-O3"], []]], ["--no-slim"])]


@pytest.fixture(scope="session")
def torch_headers(shared_build_cache):
    """The precompiled torch headers (torch/extension.h, and torch/types.h for the slim
    units) and the header's identifiers (fail-fast) for SEED_SPECS, made once per test
    session in the shared build cache, as a verification run's preparation makes them
    (verify/build/build_prepare.py). A compile that finds them costs about a third of
    one that does not (issue 45: the suite's compiles went plain before, and runs in
    their own caches each started the same header builds in the background, ~60 CPU-s
    apiece). Under pytest-xdist one worker makes them while the other waits on a lock.

    Returns `seed(root)`: hard links these entries into another build cache's root (a
    test's own cache, still cold for everything else) and returns the root."""
    import fcntl
    import shutil

    from kernelmill.verify.build import build_prepare

    from concurrent.futures import ThreadPoolExecutor

    build = Path(shared_build_cache) / "build"
    build.mkdir(exist_ok=True)
    with open(build / "torch_headers.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        # the flag sets side by side: the plain set's two headers and the -O3 set's one keep
        # both cores busy (one after the other, the -O3 header had a core to itself while
        # the other worker waited on the lock: 76 s -> 55 s here)
        with ThreadPoolExecutor(len(SEED_SPECS)) as pool:
            list(pool.map(lambda spec: build_prepare.main([str(build), "--specs", json.dumps(spec[0]), *spec[1]]),
                          SEED_SPECS))

    def seed(root) -> Path:
        root = Path(root)
        for kind in ("pch", "idents"):
            for entry in (build / kind).glob("*") if (build / kind).is_dir() else []:
                dest = root / kind / entry.name
                if not dest.exists():
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copytree(entry, dest, copy_function=os.link)
        return root

    return seed


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

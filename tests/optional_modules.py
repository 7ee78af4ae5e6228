"""Import an optional heavy module for a test, or skip the test with the reason.

`pytest.importorskip` skips only on ImportError. TileLang and TVM fail in other ways when
their versions disagree (tilelang 0.1.15 with apache-tvm-ffi 0.1.14 raises ValueError while
registering classes), and a failed tilelang import leaves tvm_ffi's native type registry
half-filled, after which apache-tvm can no longer be imported in the same process. So the
import is tried first in a child interpreter; only a module that imports cleanly there is
imported into the test session.
"""

from __future__ import annotations

import functools
import importlib
import subprocess
import sys

import pytest


@functools.lru_cache(maxsize=None)
def _child_import_error(name: str) -> str | None:
    proc = subprocess.run([sys.executable, "-c", f"import {name}"], capture_output=True, text=True,
                          timeout=300)
    if proc.returncode == 0:
        return None
    lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
    return lines[-1][:200] if lines else f"exit code {proc.returncode}"


def import_or_skip(name: str, reason: str | None = None):
    why = reason or f"{name} cannot be imported"
    error = _child_import_error(name)
    if error is not None:
        pytest.skip(f"{why} ({error})", allow_module_level=True)
    try:
        return importlib.import_module(name)
    except Exception as exc:  # noqa: BLE001 - any failure of an optional module means skip
        pytest.skip(f"{why} ({type(exc).__name__}: {str(exc)[:160]})", allow_module_level=True)

"""Loading a script of benchmarks/ (not a package) as a module, once per session."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def load_script(name: str, path: Path):
    """The module of the script at `path`, under `name` in sys.modules (dataclasses
    and pickling look their module up there)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def load_benchmark(stem: str):
    """benchmarks/<stem>.py as a module."""
    return load_script(f"kernelmill_bench_{stem}", REPO / "benchmarks" / f"{stem}.py")

"""TileLang's CPU tests, also where the test environment's own tilelang cannot be imported.

`.[test]` installs apache-tvm 0.27 (for `ptx augment`), which needs apache-tvm-ffi 0.1.14;
tilelang 0.1.15 needs apache-tvm-ffi < 0.1.13 (pyproject.toml says so). On a machine with
both, CI's among them (tilelang is preinstalled there), `import tilelang` fails and the
TileLang test files skip. This test then runs those files in a child pytest with the
apache-tvm-ffi that tilelang asks for put first on PYTHONPATH (`pip install --target`, from
tilelang's own requirement), so TileLang's CPU path (lowering to CUDA source, nvcc where there
is one) is tested in CI after all. Where tilelang imports, those files ran in this session
already and this test skips; where tilelang is not installed, it skips as they do.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from optional_modules import _child_import_error

ROOT = Path(__file__).resolve().parents[2]
FILES = ["tests/dsl/test_tilelang_cpu.py", "tests/dsl/test_tilelang_backend.py", "tests/dsl/test_tilelang_seeds.py"]
# and the seeds' parameters against their references (test_builtin_semantics.py skips them too)
SEMANTICS = ["tests/tasks/test_builtin_semantics.py", "-k", "tilelang and parameters"]


def _ffi_requirement() -> str | None:
    try:
        reqs = importlib.metadata.requires("tilelang") or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for r in reqs:
        spec = r.split(";")[0].replace(" ", "")
        if re.match(r"apache[-_]tvm[-_]ffi", spec, re.I):
            return spec
    return None


def test_tilelang_cpu_tests_run_beside_apache_tvm(tmp_path):
    spec = _ffi_requirement()
    if spec is None:
        pytest.skip("tilelang is not installed (or names no apache-tvm-ffi): the TileLang tests skip too")
    if _child_import_error("tilelang") is None:
        pytest.skip("tilelang imports in this environment: the TileLang test files ran in this session")
    overlay = tmp_path / "site"
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-compile",
                          "--target", str(overlay), spec], capture_output=True, text=True, timeout=600)
    assert pip.returncode == 0, f"pip install {spec}: {pip.stderr[-2000:]}"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(overlay), str(ROOT / "src"), os.environ.get("PYTHONPATH", "")) if p))
    probe = subprocess.run([sys.executable, "-c", "import tilelang"], env=env, capture_output=True, text=True,
                           timeout=300)
    assert probe.returncode == 0, f"tilelang with {spec} first on the path: {probe.stderr[-2000:]}"
    for args in (FILES, SEMANTICS):
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", *args],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=2400)
        tail = proc.stdout[-4000:] + proc.stderr[-2000:]
        assert proc.returncode == 0, tail
        counts = {k: int(n) for n, k in re.findall(r"(\d+) (passed|skipped|failed|errors?)\b", proc.stdout)}
        assert counts.get("passed", 0) > 0 and not counts.get("failed") and not counts.get("error"), tail
        # the files' own import skips would mean tilelang was still not importable in the child
        assert "cannot be imported" not in proc.stdout, tail

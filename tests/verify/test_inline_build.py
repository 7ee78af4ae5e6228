"""The cached load_inline: same module as torch's, warm loads compile nothing,
compile errors keep torch's wording, anything unusual goes to torch's builder."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

SOURCE = r'''
torch::Tensor twice(torch::Tensor x) { return x * 2; }
'''
PROG = r'''
import json, sys
from kernelmill.verify.build import inline_build
inline_build.install(sys.argv[1])
import torch
from torch.utils.cpp_extension import load_inline
src = sys.argv[2]
try:
    ext = load_inline(name="km_twice", cpp_sources=src, functions=["twice"])
    out = {"value": ext.twice(torch.ones(3)).tolist(), "doc": ext.twice.__doc__ is not None}
except RuntimeError as exc:
    out = {"error": str(exc)}
out["log"] = inline_build.builder_log()
print(json.dumps(out))
'''


def _run(cache, src):
    res = subprocess.run([sys.executable, "-c", PROG, str(cache), src], capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def built(tmp_path_factory, torch_headers):
    cache = torch_headers(tmp_path_factory.mktemp("buildcache"))  # cold but for the prepared headers
    return cache, _run(cache, SOURCE)


def test_cold_build_gives_a_working_module(built):
    _, out = built
    assert out["value"] == [2.0, 2.0, 2.0] and out["log"]["warm"] is False
    # a C++ extension with functions=: its code, the shared binding, the entry point (slim_units.py)
    assert sorted(out["log"]["compiled"]) == ["shim", "sigbind", "slim"] and out["log"]["slim"] is True
    # linked against stubs of torch's libraries (link_stubs.py): the module names the real ones
    cache, _ = built
    assert out["log"]["link_stubs"] is True
    so = next(cache.glob("so/*/*/km_twice.so"))
    needed = [ln.split("[")[1].rstrip("]") for ln in subprocess.run(["readelf", "-d", str(so)], capture_output=True,
              text=True).stdout.splitlines() if "(NEEDED)" in ln]
    assert {"libc10.so", "libtorch_cpu.so", "libtorch_python.so"} <= set(needed)


def test_same_source_in_another_process_compiles_nothing(built):
    cache, _ = built
    out = _run(cache, SOURCE)
    assert out["value"] == [2.0, 2.0, 2.0] and out["log"] == {"warm": True}


def test_compile_errors_are_torchs_wording_and_cached(built):
    cache, _ = built
    bad = SOURCE.replace("x * 2", "x * undefined_name")
    first = _run(cache, bad)
    assert "Error building extension 'km_twice'" in first["error"] and "undefined_name" in first["error"]
    again = _run(cache, bad)  # the same bad source fails at once, from the cache
    assert again["error"] == first["error"] and "compiled" not in again["log"]


def test_unusual_arguments_go_to_torch(monkeypatch, tmp_path):
    from kernelmill.verify.build import inline_build

    calls = []
    monkeypatch.setattr(inline_build, "_ORIGINAL", lambda **kw: calls.append(kw) or "torch's")
    monkeypatch.setattr(inline_build, "_BUILDER", inline_build.InlineBuilder(tmp_path))
    assert inline_build.load_inline("m", "int f();", is_python_module=False) == "torch's"
    assert calls and calls[0]["is_python_module"] is False
    assert "fallback" in inline_build.builder_log()


def test_sources_are_assembled_as_torch_does():
    import inspect

    import torch.utils.cpp_extension as ce

    from kernelmill.verify.build.inline_build import assemble

    cpp, cu = assemble("m", "int f(int);", "__global__ void k() {}", ["f"])
    assert cpp.splitlines()[0] == "#include <torch/extension.h>"
    assert 'm.def("f", torch::wrap_pybind_function(f), "f");' in cpp
    assert cu.splitlines()[:3] == ["#include <torch/types.h>", "#include <cuda.h>", "#include <cuda_runtime.h>"]
    # torch's own text still builds the bindings this way (guards against a silent upstream change)
    src = inspect.getsource(ce.load_inline)
    assert "torch::wrap_pybind_function" in src and "'#include <torch/types.h>'" in src

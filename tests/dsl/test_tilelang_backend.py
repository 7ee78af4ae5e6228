"""The TileLang verify backend on a machine without a GPU: the environment its
processes get, the verdict on CPU, the version in the measurement, and the trace
guard counting a TileLang kernel call as the candidate's own code."""

from __future__ import annotations

import json
import types
from pathlib import Path

import pytest
from optional_modules import import_or_skip
import torch

from kernelmill.languages import get_language
from kernelmill.languages.tilelang import tilelang_target
from kernelmill.records import Sample, Task
from kernelmill.verify.guards import trace
from kernelmill.verify.guards.source import check_source, own_kernel_names
from kernelmill.verify.sandbox import scrubbed_env
from kernelmill.verify.runner import static_verdict


def test_tilelang_caches_live_in_the_verify_cache(tmp_path):
    env = get_language("tilelang").env("cuda", tmp_path, tmp_path / "ext", "9.0", build_jobs=1)
    assert env["TILELANG_CACHE_DIR"] == str(tmp_path / "tilelang")
    assert env["TVM_FFI_CACHE_DIR"] == str(tmp_path / "tvm-ffi")
    assert json.loads(env["TILELANG_DEFAULT_TARGET"]) == {"kind": "cuda", "arch": "sm_90a"}
    assert "TRITON_CACHE_DIR" not in env and "TORCH_EXTENSIONS_DIR" not in env
    # no GPU known: TileLang's own detection decides (no target forced)
    assert "TILELANG_DEFAULT_TARGET" not in get_language("tilelang").env("cuda", tmp_path, tmp_path, None, 1)
    assert "TILELANG_CACHE_DIR" not in get_language("triton").env("cuda", tmp_path, tmp_path, "9.0", 1)


@pytest.mark.parametrize("cap, arch", [("9.0", "sm_90a"), ("8.0", "sm_80"), ("8.9", "sm_89"),
                                       ("10.0", "sm_100a"), ("8.0;9.0", "sm_80")])
def test_target_names_the_arch_as_tilelang_does(cap, arch):
    assert json.loads(tilelang_target(cap))["arch"] == arch


def test_sandbox_passes_tilelang_settings_and_nothing_else(monkeypatch):
    monkeypatch.setenv("TILELANG_CACHE_DIR", "/somewhere")
    monkeypatch.setenv("TILELANG_COMPILE_TIMEOUT_SECONDS", "120")
    monkeypatch.setenv("TILELANG_SOMETHING_ELSE", "1")
    env = scrubbed_env()
    assert env["TILELANG_CACHE_DIR"] == "/somewhere" and env["TILELANG_COMPILE_TIMEOUT_SECONDS"] == "120"
    assert "TILELANG_SOMETHING_ELSE" not in env


def test_tilelang_on_cpu_is_named_unsupported_device():
    task = Task("t1", "import torch\n", level=1)
    code = (Path(__file__).parents[2] / "src/kernelmill/tasks/builtin/candidates/level1/01_ReLU/tilelang__ok.py").read_text()
    v = static_verdict(Sample("s1", "t1", "tilelang", code), task, "cpu")
    assert v.status == "runtime_error" and v.flags == ["unsupported_device"]
    assert "CUDA GPU" in v.message


def test_prim_func_names_are_own_kernel_names():
    code = ("import tilelang.language as T\n@T.prim_func\ndef row_softmax(X):\n    pass\n"
            "def helper():\n    pass\n")
    assert own_kernel_names(code) == ["row_softmax"]


def test_tilelang_seed_source_has_no_guard_findings():
    root = Path(__file__).parents[2] / "src/kernelmill/tasks/builtin/candidates"
    for path in sorted(root.glob("level*/*/tilelang__ok*.py")):
        assert check_source(path.read_text(), "standard", "tilelang") == [], path


def test_measurement_records_the_tilelang_version():
    from kernelmill.verify.measure.environment import describe

    info = describe(torch.device("cpu"))
    assert "tilelang" in info
    try:
        import importlib.metadata as md

        assert info["tilelang"] == md.version("tilelang")
    except md.PackageNotFoundError:
        assert info["tilelang"] is None


def test_a_tilelang_kernel_call_counts_as_own_code():
    kernel_mod = import_or_skip("tilelang.jit.kernel", reason="tilelang cannot be imported")
    assert kernel_mod.JITKernel.__call__.__code__ in __import__("kernelmill.languages", fromlist=["kernel_codes"]).kernel_codes()
    # JITKernel.__call__ runs the compiled function it holds; a stand-in holder
    # runs its code object exactly as a compiled kernel's call would (no GPU here)
    holder = types.SimpleNamespace(torch_function=lambda x: x + 1)
    tracer = trace.OwnCodeTracer({}, [])
    x = torch.ones(4)
    prof = trace.profile_call(lambda: kernel_mod.JITKernel.__call__(holder, x), torch.device("cpu"), tracer)
    assert prof["own_calls"] == 1
    # the same computation without the kernel call is not own code
    prof = trace.profile_call(lambda: x + 1, torch.device("cpu"), trace.OwnCodeTracer({}, []))
    assert prof["own_calls"] == 0

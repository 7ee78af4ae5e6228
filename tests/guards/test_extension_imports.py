"""An extension that torch's own build path imports (`load(sources=...)`, or `load_inline`
where the fast builder hands over) is the candidate's own compiled code: torch leaves it
out of `sys.modules`, and calls into it used to go unseen (a false `torch_fallback` on an
H200, cuda-l1 L2-35). A tiny CPython extension stands in for the built module (~1 s of gcc),
initialised in phases as pybind11 3 (torch's) makes extensions: such a module never enters
`sys.modules` by itself."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import torch
import torch.utils.cpp_extension as ce

from kernelmill.verify.guards import trace

SRC = r"""
#include <Python.h>
static PyObject* twice(PyObject* self, PyObject* arg) { return PyNumber_Multiply(arg, PyLong_FromLong(2)); }
static PyMethodDef methods[] = {{"twice", twice, METH_O, "x * 2"}, {NULL, NULL, 0, NULL}};
static PyModuleDef_Slot slots[] = {{0, NULL}};
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "km_torch_path_ext", NULL, 0, methods, slots};
PyMODINIT_FUNC PyInit_km_torch_path_ext(void) { return PyModuleDef_Init(&mod); }
"""


@pytest.fixture
def built(tmp_path):
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler")
    (tmp_path / "ext.c").write_text(SRC)
    subprocess.run([cc, "-shared", "-fPIC", "-O0", f"-I{sysconfig.get_paths()['include']}", str(tmp_path / "ext.c"),
                    "-o", str(tmp_path / "km_torch_path_ext.so")], check=True)
    return tmp_path


def test_a_module_torchs_build_path_imports_is_the_candidates_own(built, monkeypatch):
    monkeypatch.setattr(ce, "_import_module_from_library", ce._import_module_from_library)  # restored after
    monkeypatch.setattr(trace, "_IMPORTED", {})
    before = set(sys.modules)
    # without the record: what torch imports is in no registry the tracer reads
    unseen = ce._import_module_from_library("km_torch_path_ext", str(built), True)
    assert "km_torch_path_ext" not in sys.modules and trace.extension_modules(before) == {}
    trace.record_extension_imports()
    trace.record_extension_imports()  # twice is once (a spare's process may call it again)
    assert ce._import_module_from_library.__name__ == "importing"
    assert ce._import_module_from_library("km_torch_path_ext", str(built), True) is not None
    mods = trace.extension_modules(before)
    assert list(mods) == ["km_torch_path_ext"]
    tracer = trace.OwnCodeTracer(mods, [])
    prof = trace.profile_call(lambda: mods["km_torch_path_ext"].twice(21), torch.device("cpu"), tracer)
    assert prof["own_calls"] == 1
    assert unseen.twice(2) == 4


def test_a_candidate_built_by_torchs_own_load_is_not_a_fallback(tmp_path):
    """End to end on a CPU: the honest corpus's `load(sources=[...])` candidate, given a
    `build_directory` so that torch's own path builds it (the fast builder takes the plain
    call, tests/verify/test_load_as_inline.py), is ok and unflagged."""
    sys.path.insert(0, str(Path(__file__).parent))
    from guard_tasks import RELU
    from honest_corpus import CPP_RELU_TORCH_LOAD

    from kernelmill.records import Sample
    from kernelmill.verify import TimingConfig, VerifyConfig, verify_samples

    code = CPP_RELU_TORCH_LOAD.replace("verbose=False)", "verbose=False, build_directory=folder)")
    assert code != CPP_RELU_TORCH_LOAD
    cfg = VerifyConfig(device="cpu", trials=2, build_timeout=300, run_timeout=60, cache_dir=str(tmp_path / "cache"),
                       guards="standard", timing=TimingConfig(warmup_ms=5, round_ms=3, budget_ms=20, min_rounds=4,
                                                              max_rounds=6))
    (v,) = verify_samples({RELU.task_id: RELU}, [Sample("load", RELU.task_id, "cpp", code)], cfg)
    assert (v.status, v.flags) == ("ok", []), v.message

"""Builds that will fail fail fast (issue 40): the binding names nothing declares are
answered before compiling, only where the compile surely fails (checked by building both
ways with the real compilers); a build's first deciding error stops its other units; a unit
that opens with the precompiled header's own include is not compiled a second time."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from kernelmill.verify.build import fail_fast, inline_build
from kernelmill.verify.build.inline_build import CompileError, InlineBuilder, assemble

# -- the rule, read without a compiler ---------------------------------------------


def test_the_generated_block_is_read_with_the_compilers_line_and_column():
    main, _ = assemble("m", "", "__global__ void k(float* x) {}", ["k", "other"])
    prefix, names = fail_fast.binding_block(main)
    assert prefix == "#include <torch/extension.h>\n"
    lines = main.splitlines()
    for _py, fn, line, col in names:
        # the column of the name inside torch::wrap_pybind_function(...), 1-based, as GCC counts
        assert lines[line - 1][col - 1:col - 1 + len(fn)] == fn and lines[line - 1][col - 2] == "("
    assert [n[1] for n in names] == ["k", "other"] and [n[2] for n in names] == [4, 5]
    # without torch's error handling the name is the second argument itself
    main, _ = assemble("m", "", None, {"k": "doc"}, with_pytorch_error_handling=False)
    (_py, fn, line, col), = fail_fast.binding_block(main)[1]
    assert main.splitlines()[line - 1][col - 1:].startswith("k, ")
    # a module the candidate wrote is not torch's block: not read
    assert fail_fast.binding_block("#include <torch/extension.h>\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n"
                                   "  m.def(\"k\", &k);\n}") is None


@pytest.mark.parametrize("name, ok", [("relu_fwd", True), ("__builtin_abs", False), ("_Exit", False),
                                      ("nullptr", False), ("sizeof", False), ("x1", True)])
def test_only_names_whose_absence_proves_them_undeclared_are_judged(name, ok):
    assert fail_fast.answerable(name) is ok


def test_text_beyond_the_header_include_is_preprocessed():
    assert not fail_fast.needs_preprocessing("#include <torch/extension.h>\n")
    assert not fail_fast.needs_preprocessing("#include <torch/extension.h>\n// a comment\n/* another */\n")
    assert fail_fast.needs_preprocessing("#include <torch/extension.h>\n#include <vector>\n")
    assert fail_fast.needs_preprocessing("#include <torch/extension.h>\nDECLARE(relu);\n")


def test_the_message_is_the_compilers_diagnostic():
    text = fail_fast.message([("k", "k", 4, 60)])
    assert "main.cpp:4:60: error: 'k' was not declared in this scope" in text.splitlines()


def test_a_second_module_is_read_from_the_preprocessed_text_under_the_flags_name():
    defined = '#define TORCH_EXTENSION_NAME km\nextern "C" PyObject *PyInit_km() {\n return nullptr; }\n'
    assert fail_fast.defines_module(defined, "km")
    assert not fail_fast.defines_module(defined, "other")  # another module's entry point
    assert not fail_fast.defines_module('extern "C" PyObject *PyInit_km();\n', "km")  # declared only
    assert not fail_fast.defines_module("#undef TORCH_EXTENSION_NAME\n" + defined, "km")
    assert not fail_fast.defines_module(defined + "#define TORCH_EXTENSION_NAME km2\n", "km")
    assert fail_fast.module_name(["-O3", "-DTORCH_EXTENSION_NAME=km_x"]) == "km_x"
    assert fail_fast.module_name(["-O3"]) is None
    prefix = "#include <torch/extension.h>\nint x;\n"
    main = prefix + "\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n"
    line = fail_fast.module_message(prefix, "km").split(":")[1]
    assert main.splitlines()[int(line) - 1].startswith("PYBIND11_MODULE(")


CU_MODULE = """
#include <torch/extension.h>
__global__ void k(float* x) {}
torch::Tensor run(torch::Tensor x) { return x; }
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("run", &run);
}
"""


@pytest.mark.parametrize("cu, line", [
    (CU_MODULE, 5),
    (CU_MODULE.replace("PYBIND11_MODULE", "#if 1\nPYBIND11_MODULE").replace("\n}\n", "\n}\n#endif\n"), None),
    (CU_MODULE.replace("#include <torch/extension.h>", '#include "my.h"'), None),
    ("#define TORCH_EXTENSION_NAME other\n" + CU_MODULE, None),
    (CU_MODULE.replace("PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n  m.def(\"run\", &run);\n}", ""), None),
    ("// PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {}\n" + CU_MODULE.split("PYBIND11")[0], None),
    ("namespace n {\n" + CU_MODULE.split("#include <torch/extension.h>")[1] + "}\n", None),
])
def test_a_module_written_in_cuda_sources_is_read_only_where_it_surely_compiles(cu, line):
    assert fail_fast.cuda_module_line(cu) == line


CPP_MODULE = ("torch::Tensor km_act(torch::Tensor x) { return x; }\n"
              "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n  m.def(\"forward\", &km_act);\n}\n")


@pytest.mark.parametrize("cpp, sure", [
    (CPP_MODULE, True),
    ("#include <vector>\n" + CPP_MODULE, True),
    ("#if 1\n" + CPP_MODULE + "#endif\n", False),  # a conditional: the preprocessor decides
    ('#include "mine.h"\n' + CPP_MODULE, False),  # a header of its own could rename the module
    ("#undef TORCH_EXTENSION_NAME\n#define TORCH_EXTENSION_NAME other\n" + CPP_MODULE, False),
    ("#define PYBIND11_MODULE(a, b) void f(b)\n" + CPP_MODULE, False),
    ("// PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {}\n" + CPP_MODULE.split("PYBIND11")[0], False),
    ("namespace n {\n" + CPP_MODULE + "}\n", False),
])
def test_a_module_written_in_cpp_sources_is_read_from_the_text_only_where_it_is_sure(cpp, sure, tmp_path,
                                                                                    monkeypatch):
    """cuda-l1's 7 `module twice` builds each ran an -E of the torch header (3-6 s in a cold run on
    the device, session_2026-11-30b). Where the text says it for sure, no preprocessor runs; where
    it does not, the preprocessed text decides, as before."""
    main, _ = assemble("km", cpp, None, ["forward"])
    prefix, _names = fail_fast.binding_block(main)
    assert fail_fast.prefix_writes_module(prefix) is sure
    builder = InlineBuilder(tmp_path)
    calls = []  # the preprocessor's texts asked for (each an -E on the device)
    monkeypatch.setattr(builder, "_prefix_text", lambda prefix, flags, cxx: calls.append(prefix))
    monkeypatch.setattr(builder, "header_identifiers", lambda cxx, flags, make=True: calls.append("idents") or set())
    flags = {"cxx": "c++", "cflags": ["-DTORCH_EXTENSION_NAME=km"], "post_cflags": []}
    if sure:
        with pytest.raises(CompileError, match=r"main\.cpp:\d+:1: error: redefinition of 'PyObject\* PyInit_km\(\)'"):
            builder._check_bindings(main, flags, ["c++"])
        assert builder.log["fail_fast"] == "module twice" and calls == []
    else:
        builder._check_bindings(main, flags, ["c++"])  # (the stand-in gives no text: no answer)
        assert prefix in calls, "not sure from the text: the preprocessed text decides"


def test_a_cuda_module_beside_functions_fails_before_compiling(tmp_path, monkeypatch):
    builder = InlineBuilder(tmp_path)
    monkeypatch.setattr(builder, "header_identifiers", lambda cxx, flags, make=True: {"at", "Tensor"})
    flags = {"cxx": "c++", "cflags": ["-DTORCH_EXTENSION_NAME=km"], "cuda_cflags": ["-DTORCH_EXTENSION_NAME=km"],
             "ldflags": ["-shared"]}
    main, cuda = assemble("km", "", CU_MODULE, ["run"])
    with pytest.raises(CompileError, match=r"cuda\.cu:8:1: error: .*multiple definition of `PyInit_km'"):
        builder._check_cuda_module(main, cuda, flags)
    assert builder.log["fail_fast"] == "module in cuda_sources"
    # without functions= the module in cuda_sources is the only one: nothing to say
    builder._check_cuda_module(*assemble("km", "", CU_MODULE, None), flags)
    # a link that takes the first of two definitions, or main.cpp code with directives: not judged
    builder._check_cuda_module(main, cuda, {**flags, "ldflags": ["-shared", "-Wl,-z,muldefs"]})
    builder._check_cuda_module(assemble("km", "#define X 1\n", CU_MODULE, ["run"])[0], cuda, flags)
    assert fail_fast.plain_prefix("#include <torch/extension.h>\ntorch::Tensor run(torch::Tensor x);\n")


@pytest.mark.parametrize("opening, header, same", [
    ("#include <torch/extension.h>\nint f();", "#include <torch/extension.h>\n", True),
    ("// leading comment\n/* and\n another */\n  #include <torch/types.h>\n", "#include <torch/types.h>\n", True),
    ("#include <torch/types.h>\n#include <cuda.h>\n", "#include <torch/extension.h>\n", False),
    ("#define X 1\n#include <torch/extension.h>\n", "#include <torch/extension.h>\n", False),
    ('#include "torch/extension.h"\n', "#include <torch/extension.h>\n", False),
])
def test_a_unit_reads_the_same_with_the_header_forced_in_only_when_it_opens_with_it(opening, header, same):
    assert inline_build._opens_with(opening, header) is same


# -- the builder's order, with stand-in compilers ----------------------------------

FAKE_CC = r'''
import os, subprocess, sys, time
args = sys.argv[1:]
src = open(args[args.index("-c") + 1]).read()
if "SLOW" in src:  # a long compile that starts a child of its own (as nvcc starts cicc, ptxas)
    child = subprocess.Popen(["sleep", "60"])
    open(os.environ["KM_FAKE_PIDS"], "a").write(f"{os.getpid()} {child.pid}\n")
    child.wait()
if "WAIT_PIDS" in src:  # fail only once the slow unit's compiler runs (else it may be stopped unstarted)
    for _ in range(600):
        if os.path.exists(os.environ["KM_FAKE_PIDS"]):
            break
        time.sleep(0.05)
if "FAIL" in src:
    print(f"{args[args.index('-c') + 1]}:1:1: error: FAIL", file=sys.stderr)
    sys.exit(1)
open(args[args.index("-o") + 1], "wb").write(b"obj")
'''


@pytest.fixture
def fake_cc(tmp_path, monkeypatch):
    script = tmp_path / "fake_cc.py"
    script.write_text(FAKE_CC)
    monkeypatch.setenv("KM_FAKE_PIDS", str(tmp_path / "pids"))
    monkeypatch.setattr(inline_build, "tool_id", lambda tool: tool)
    monkeypatch.setattr(inline_build, "_PCH_AFTER_USES", 10 ** 6)
    return [sys.executable, str(script)], tmp_path / "pids"


def _unit(kind, text, cc):
    return (kind, f"{kind}.cpp", text, cc, [], [], False)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _wait_for_pids(path: Path, n: int = 1) -> list[list[int]]:
    for _ in range(300):
        if path.exists() and len(path.read_text().splitlines()) >= n:
            return [[int(x) for x in line.split()] for line in path.read_text().splitlines()]
        time.sleep(0.05)
    raise AssertionError("the slow unit never started")


def test_a_deciding_error_stops_the_other_units_compilers_tree_and_all(tmp_path, fake_cc):
    cc, pids = fake_cc
    builder = InlineBuilder(tmp_path / "cache")
    stop = inline_build._Stop()
    # the failing unit waits for the slow one's compiler to start: on a loaded machine its error
    # came first once and the slow unit was stopped before it ran (nothing to see killed)
    units = [_unit("kernel", "SLOW", cc), _unit("binding", "FAIL WAIT_PIDS", cc)]
    t0 = time.perf_counter()
    with pytest.raises(CompileError, match=r"\[binding.cpp\]") as err:
        builder._compile("m", units, {"ldflags": []}, cc, "so-key", stop)
    assert time.perf_counter() - t0 < 30 and err.value.kinds == ("binding",)
    assert builder.log["stopped"] == ["kernel"]
    (compiler, child), = _wait_for_pids(pids)
    for _ in range(100):
        if not _alive(compiler) and not _alive(child):
            break
        time.sleep(0.05)
    assert not _alive(compiler) and not _alive(child)  # the compiler and the stage it started
    # the stopped unit left nothing in the cache: neither an object nor an error
    slow_key = builder.unit_key("kernel", "SLOW", cc, [], [])
    time.sleep(0.2)
    assert builder.cache.get("obj", slow_key) is None and builder.cache.get("err", slow_key) is None


def test_an_error_with_another_path_after_it_returns_at_once_and_the_rest_goes_on(tmp_path, fake_cc, monkeypatch):
    """A slim or merged unit's error is not the build's: the next path starts at once; the
    kernel unit it shares goes on compiling and the next path finds it in the cache."""
    cc, pids = fake_cc
    monkeypatch.setattr(inline_build, "_NVCC_UNITS", frozenset({"kernel"}))
    builder = InlineBuilder(tmp_path / "cache")
    stop = inline_build._Stop()
    slow = tmp_path / "slow_then_ok.py"
    slow.write_text("import sys, time\nargs = sys.argv[1:]\ntime.sleep(3)\n"
                    "open(args[args.index('-o') + 1], 'wb').write(b'obj')\n")
    slow_cc = [sys.executable, str(slow)]
    kernel = ("kernel", "kernel.cpp", "k", slow_cc, [], [], False)
    t0 = time.perf_counter()
    with pytest.raises(CompileError) as err:
        builder._compile("m", [kernel, _unit("merged", "FAIL", cc)], {"ldflags": []}, cc, "k1", stop,
                         inline_build._NVCC_UNITS)
    assert err.value.kinds == ("merged",) and builder.log["left_running"] == ["kernel"]
    assert time.perf_counter() - t0 < 2.5  # not waiting for the kernel unit's 3 s
    key = builder.unit_key("kernel", "k", slow_cc, [], [])
    # the next path's kernel unit waits for that compile (its lock) and takes its object
    obj = builder.compile_unit("kernel", "kernel.cpp", "k", slow_cc, [], [])
    assert obj == builder.cache.get("obj", key) / "unit.o" and builder.log["compiled"] == ["kernel"]
    stop.set()


def test_without_fail_fast_every_unit_is_waited_for(tmp_path, fake_cc):
    cc, _pids = fake_cc
    builder = InlineBuilder(tmp_path / "cache")
    units = [_unit("kernel", "FAIL kernel", cc), _unit("binding", "FAIL binding", cc)]
    with pytest.raises(CompileError) as err:
        builder._compile("m", units, {"ldflags": []}, cc, "k2")
    assert sorted(err.value.kinds) == ["binding", "kernel"]
    # each unit's seconds, kept for the verdict (runner._build_facts)
    assert sorted(builder.log["unit_s"]) == ["binding", "kernel"]
    assert all(isinstance(s, float) and s > 0 for s in builder.log["unit_s"].values())
    from kernelmill.verify.runner import _build_facts

    facts = _build_facts({**builder.log, "fail_fast": "unbound: k", "pch_wait_s": {"slim": "x"}})
    assert facts["unit_s"] == builder.log["unit_s"] and facts["fail_fast"] == "unbound: k"
    assert "pch_wait_s" not in facts  # what is not {kind: seconds} is dropped


def test_a_unit_opening_with_the_headers_include_is_not_compiled_again_without_it(tmp_path, monkeypatch):
    calls = []

    def run(cmd, cwd):
        calls.append(cmd)
        return 1, "main.cpp:3:1: error: boom"

    monkeypatch.setattr(inline_build, "_run", run)
    monkeypatch.setattr(inline_build, "tool_id", lambda tool: tool)
    pch = tmp_path / "torch_ext.h"
    pch.write_text(inline_build._PCH_HEADER)
    builder = InlineBuilder(tmp_path / "cache")
    with pytest.raises(CompileError, match="boom"):
        builder.compile_unit("binding", "main.cpp", "#include <torch/extension.h>\nint x = ;\n", ["c++"], [], [], pch)
    assert len(calls) == 1 and "-include" in calls[0]
    # a unit whose text comes before the header: the plain command decides
    with pytest.raises(CompileError):
        builder.compile_unit("host", "host.cpp", "#define N 4\n#include <torch/extension.h>\nint x = ;\n", ["c++"], [],
                             [], pch)
    assert len(calls) == 3 and "-include" not in calls[2]
    # with the checks off, as before: compiled again without the header
    inline_build.fail_fast_checks(False)
    try:
        with pytest.raises(CompileError):
            builder.compile_unit("binding", "main.cpp", "#include <torch/extension.h>\nint y = ;\n", ["c++"], [], [],
                                 pch)
    finally:
        inline_build.fail_fast_checks(True)
    assert len(calls) == 5


# -- both ways with the real compilers: the check answers only what the compile answers --

BUILD = r'''
import json, os, sys
args = json.loads(sys.argv[3])
import torch.utils.cpp_extension as ce
home = os.environ.get("KM_TEST_CUDA_HOME")
if home:
    ce.CUDA_HOME = home
    os.environ["TORCH_CUDA_ARCH_LIST"] = "9.0"
from kernelmill.verify.build import inline_build
inline_build.install(sys.argv[1], fail_fast=sys.argv[2] != "off")
if sys.argv[2] == "compile":  # a fail-fast build whose binding check says nothing: the compiler decides
    inline_build.InlineBuilder._check_bindings = lambda self, main_cpp, flags, cxx: None
if home:
    _flags = inline_build.torch_flags
    def _cpu(*a, **k):
        f = _flags(*a, **k)
        f["ldflags"] = [x for x in f["ldflags"] if x not in ("-lc10_cuda", "-ltorch_cuda")]  # a CPU torch has none
        return f
    inline_build.torch_flags = _cpu
out = {"outcome": "ok", "error": ""}
try:
    inline_build.build_only(**args)
except inline_build.CompileError as exc:
    out = {"outcome": "compile_error", "error": str(exc)}
out["log"] = inline_build.builder_log()
print(json.dumps(out))
'''


def _cuda_home() -> str | None:
    import shutil

    nvcc = shutil.which("nvcc")
    if nvcc is None:
        return None
    home = Path(nvcc).resolve().parents[1]
    if not (home / "include" / "cuda_runtime.h").exists():
        home = next((p for p in sorted(Path("/usr/local").glob("cuda*")) if (p / "include/cuda_runtime.h").exists()), home)
    return str(home)


def _build(cache: Path, mode: str, args: dict, cuda: bool = False) -> dict:
    env = {**os.environ}
    if cuda:
        env["KM_TEST_CUDA_HOME"] = _cuda_home()
    res = subprocess.run([sys.executable, "-c", BUILD, str(cache), mode, json.dumps(args)], capture_output=True,
                         text=True, timeout=1800, env=env)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


def _quotes(text: str) -> str:
    return text.replace("\u2018", "'").replace("\u2019", "'")


UNDECLARED = [
    # the list names a function cpp_sources never declares (a misspelling of the one it has)
    dict(name="km_ff_a", cpp_sources="torch::Tensor km_relu_fwd(torch::Tensor x) { return x.clamp_min(0); }\n",
         functions=["km_relu_forward"]),
    # nothing in cpp_sources at all
    dict(name="km_ff_b", cpp_sources="", functions=["km_twice"]),
    # declared only in a comment: not a declaration (the preprocessor drops it)
    dict(name="km_ff_c", cpp_sources="#include <vector>\n// torch::Tensor km_scale_rows(torch::Tensor x);\n"
                                     "torch::Tensor other(torch::Tensor x) { return x; }\n", functions=["km_scale_rows"]),
    # cpp_sources writes its own module and functions= asks torch for one too (a name the
    # header spells, "forward", so only the second module decides)
    dict(name="km_ff_f", cpp_sources="torch::Tensor km_act(torch::Tensor x) { return x; }\n"
                                     "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n  m.def(\"forward\", &km_act);\n}\n",
         functions=["forward"]),
]


# built the real way too, to hold the message to the compiler's: one per kind of message
COMPILED_TOO = {"km_ff_a", "km_ff_f"}


@pytest.mark.slow
@pytest.mark.parametrize("args", UNDECLARED, ids=lambda a: a["name"])
def test_an_undeclared_binding_fails_before_compiling_as_the_compile_does(args, torch_headers, tmp_path):
    fast = _build(torch_headers(tmp_path / "on"), "on", args)
    assert fast["outcome"] == "compile_error"
    assert fast["log"]["fail_fast"].startswith(("unbound: ", "module twice")) and "compiles" in fast["log"]
    assert "compiled" not in fast["log"]
    if args["name"] not in COMPILED_TOO:
        # the same rule and message as km_ff_a's, for a name absent another way (~28 CPU-s a
        # real compile: issue 45); the message's words are the compiler's own (below)
        where = next(line for line in fast["error"].splitlines() if ": error: " in line)
        assert f"error: '{args['functions'][0]}' was not declared in this scope" in where
        return
    # the compiler's own diagnostic: the same build with the check skipped, its unit compiled
    # with the precompiled header, whose error a fail-fast build keeps (the unit opens with
    # the header's include: test_a_unit_opening_with_the_headers_include_is_not_compiled_again_
    # without_it); without fail-fast the failed unit is compiled again without the header for
    # torch's exact command, ~20 CPU-s more a build (issue 45)
    slow = _build(torch_headers(tmp_path / "compile"), "compile", args)
    assert slow["outcome"] == "compile_error" and "fail_fast" not in slow["log"]
    assert slow["log"].get("pch_used") == ["binding"] and slow["log"].get("compiles") == 1
    # the same file, line, column and words as the compiler's own diagnostic
    where = next(line for line in fast["error"].splitlines() if ": error: " in line)
    if fast["log"]["fail_fast"] == "module twice":
        # GCC puts the error in pybind11's macro and names main.cpp's line in its expansion note
        assert "error: redefinition of" in slow["error"] and where.split(" error: ")[0] in slow["error"]
    else:
        assert where in _quotes(slow["error"]), (where, slow["error"][-2000:])


MUST_BUILD = [
    # declared through a macro that pastes the name together: only the preprocessed text spells it
    dict(name="km_ff_d", cpp_sources="#define KM_DEF(n) torch::Tensor n##_fwd(torch::Tensor x) { return x * 2; }\n"
                                     "KM_DEF(twice)\n", functions=["twice_fwd"]),
    # declared in a header of the candidate's own (an include folder)
    dict(name="km_ff_e", cpp_sources='#include "km_decl.h"\ntorch::Tensor KM_NAME(torch::Tensor x) { return x; }\n',
         functions=["ident_fwd"]),
    # declared through the torch header's own pasting macro (c10's C10_CONCATENATE), in a
    # cpp_sources with no directive: only the preprocessed text spells the name
    dict(name="km_ff_h", cpp_sources="torch::Tensor C10_CONCATENATE(km_, cat_fwd)(torch::Tensor x) { return x; }\n",
         functions=["km_cat_fwd"]),
    # a module of its own the preprocessor drops: only torch's block defines the module
    dict(name="km_ff_g", cpp_sources="torch::Tensor km_same(torch::Tensor x) { return x; }\n#if 0\n"
                                     "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(\"km_same\", &km_same); }\n#endif\n",
         functions=["km_same"]),
]


@pytest.mark.slow
@pytest.mark.parametrize("args", MUST_BUILD, ids=lambda a: a["name"])
def test_a_binding_declared_where_only_the_preprocessor_sees_it_builds(args, torch_headers, tmp_path):
    args = dict(args)
    if "km_decl.h" in args["cpp_sources"]:
        inc = tmp_path / "inc"
        inc.mkdir()
        (inc / "km_decl.h").write_text("#pragma once\n#define KM_NAME ident_fwd\n")
        args["extra_include_paths"] = [str(inc)]
    fast = _build(torch_headers(tmp_path / "on"), "on", args)
    assert fast["outcome"] == "ok", fast["error"][-2000:]
    assert "fail_fast" not in fast["log"]


def test_a_name_the_header_spells_is_left_to_the_compiler(tmp_path, monkeypatch):
    """Without a compiler: identifiers given; a name the torch header spells anywhere
    (in any namespace) is not judged, one it does not spell is."""
    builder = InlineBuilder(tmp_path)
    monkeypatch.setattr(builder, "header_identifiers", lambda cxx, flags, make=True: {"forward", "at", "Tensor"})
    flags = {"cxx": "c++", "cflags": []}
    builder._check_bindings(assemble("m", "", None, ["forward"])[0], flags, ["c++"])  # not judged
    with pytest.raises(CompileError, match=r"main\.cpp:5:\d+: error: 'my_kernel' was not declared"):
        builder._check_bindings(assemble("m", "", None, ["forward", "my_kernel"])[0], flags, ["c++"])
    assert builder.log["fail_fast"] == "unbound: my_kernel"
    # without the header's identifiers (they could not be made): no answer
    monkeypatch.setattr(builder, "header_identifiers", lambda cxx, flags, make=True: None)
    builder._check_bindings(assemble("m", "", None, ["my_kernel"])[0], flags, ["c++"])
    # no implicit header: what precedes the block is not torch's header, not judged
    builder._check_bindings(assemble("m", "", None, ["my_kernel"], no_implicit_headers=True)[0], flags, ["c++"])


def fake_preprocessor(monkeypatch) -> list:
    """The builder's compiler calls recorded, each `-E` answering a small header text."""
    from kernelmill.verify.build import inline_build

    calls = []

    def fake_run(cmd, cwd, *a, **k):
        calls.append(cmd)
        (Path(cwd) / "torch_ext.ii").write_text("namespace at { class Tensor; }\n#define TORCH_CHECK(x) x\n")
        return 0, ""

    monkeypatch.setattr(inline_build, "_run", fake_run)
    return calls

def test_the_headers_identifiers_are_made_while_another_process_holds_their_lock(tmp_path, monkeypatch):
    """Issue 40 from a cold machine: the first builds of a run find no identifiers yet and one
    process (a build, or prepare-builds at idle priority) making them. A build that gave up then
    compiled in full (cuda-l1's failing builds: 30-50 s each on a fresh two-GPU host); it makes
    its own copy now, and the copy that lands first is kept."""
    from kernelmill.verify.build import inline_build

    calls = fake_preprocessor(monkeypatch)
    monkeypatch.setattr(inline_build, "_IDENTS_WAIT_S", 0.2)  # a maker that does not finish in time
    builder = InlineBuilder(tmp_path)
    key = builder._pch_key("c++", [])
    holder = builder.cache.try_lock("idents", key)  # another process's hold
    assert holder is not None
    with holder:
        assert builder.cache.try_lock("idents", key) is None
        known = builder.header_identifiers("c++", [])
    assert known is not None and {"Tensor", "TORCH_CHECK", "at"} <= known and len(calls) == 1
    assert builder.log["idents_made"] is True  # the verdict says this build made its own copy
    # kept in the cache: the next build reads them without a compiler call
    assert builder.header_identifiers("c++", []) == known and len(calls) == 1
    # and a failing binding is answered while the lock is held
    with builder.cache.try_lock("idents", builder._pch_key("c++", ["-DX"])):
        with pytest.raises(CompileError, match="'my_kernel' was not declared"):
            builder._check_bindings(assemble("m", "", None, ["my_kernel"])[0], {"cxx": "c++", "cflags": ["-DX"]}, ["c++"])
    assert len(calls) == 2


def test_a_build_waits_for_the_identifiers_another_process_is_making(tmp_path, monkeypatch):
    """A cold run starts its builds at once: 25 failing ones on the device each made their own
    copy of the header's identifiers (3.8-7.9 s of their checks, session_2026-11-30). While
    another process holds the lock and publishes within `_IDENTS_WAIT_S`, a build uses that copy
    and runs no preprocessor of its own."""
    import threading

    from kernelmill.verify.build import inline_build

    calls = fake_preprocessor(monkeypatch)
    maker, waiter = InlineBuilder(tmp_path), InlineBuilder(tmp_path)  # two processes, one cache
    key = maker._pch_key("c++", [])
    holder = maker.cache.try_lock("idents", key)
    assert holder is not None

    def make_later():
        with holder:
            threading.Event().wait(0.4)
            maker._make_identifiers("c++", [], key)

    t = threading.Thread(target=make_later)
    t.start()
    known = waiter.header_identifiers("c++", [])
    t.join()
    assert known is not None and {"at", "Tensor"} <= known
    assert len(calls) == 1, "the waiting build ran a preprocessor of its own"
    assert 0.3 <= waiter.times["idents_s"] < inline_build._IDENTS_WAIT_S
    assert "idents_made" not in waiter.log and maker.log.get("idents_made") is None  # made by hand above
    # what the verdict's build facts carry: the wait, and 0 for a build that found them ready
    assert waiter.log["idents_s"] == waiter.times["idents_s"]
    later = InlineBuilder(tmp_path)
    assert later.header_identifiers("c++", []) == known and later.log["idents_s"] == 0.0

def test_a_build_answered_before_compiling_is_known_to_fail_by_the_next_process_that_asks(tmp_path, monkeypatch):
    """A run process asks whether its build is cached before it would have it built elsewhere
    (lazy_builds.py, `cached`). A build the check answered kept nothing, so the run was sent
    back to the build worker twice and then compiled it itself (cuda-l1 L1-2, L3-45: ~70 s
    each). The answer is kept now, with its message, kinds and rule."""
    monkeypatch.setattr(inline_build, "tool_id", lambda tool: tool)
    flags = {"cxx": "c++", "cflags": [], "post_cflags": [], "ldflags": [], "fingerprint": ""}
    main = assemble("m", "", None, ["my_kernel"])[0]
    first = InlineBuilder(tmp_path / "cache")
    monkeypatch.setattr(first, "header_identifiers", lambda cxx, f, make=True: {"at", "Tensor"})
    with pytest.raises(CompileError, match="'my_kernel' was not declared") as err:
        first.build("m", main, None, flags)
    assert first.log["fail_fast"] == "unbound: my_kernel"
    later = InlineBuilder(tmp_path / "cache")  # another process: nothing of the first in memory

    def no_check(*a, **k):
        raise AssertionError("checked again")

    monkeypatch.setattr(later, "precheck", no_check)
    with pytest.raises(CompileError) as again:
        later.build("m", main, None, flags, compile=False)  # the run's question: cached?
    assert str(again.value) == str(err.value) and again.value.kinds == err.value.kinds
    assert later.log["fail_fast"] == "unbound: my_kernel" and "compiles" not in later.log
    # another source is another build: not answered from it
    assert later.build("m", assemble("m", "int x;", None, ["my_kernel"])[0], None, flags, compile=False) is None



def test_a_build_that_failed_to_compile_is_known_to_fail_by_the_next_process_that_asks(tmp_path, monkeypatch):
    """Not only the precheck's answers: a build whose unit did not compile is kept as a
    failure too. cuda-l1 L2-90 (session_2026-11-30) failed in its host unit; its candidate
    caught the error, so the build phase read "built", and its run asked twice whether the
    extension was cached, was sent to the build worker twice and went on without it."""
    monkeypatch.setattr(inline_build, "tool_id", lambda tool: tool)
    flags = {"cxx": "c++", "cflags": [], "post_cflags": [], "ldflags": [], "fingerprint": ""}
    main = assemble("m", "int f() { return not_declared_anywhere; }", None, None, True, True)[0]
    first = InlineBuilder(tmp_path / "cache")
    with pytest.raises(CompileError, match="not_declared_anywhere") as err:
        first.build("m", main, None, flags)
    assert "fail_fast" not in first.log  # compiled, not answered
    later = InlineBuilder(tmp_path / "cache")
    with pytest.raises(CompileError) as again:
        later.build("m", main, None, flags, compile=False)
    assert str(again.value) == str(err.value) and later.log["failed_before"] and "compiles" not in later.log

@pytest.mark.slow
@pytest.mark.skipif(_cuda_home() is None, reason="needs nvcc (CUDA's compilers; no GPU)")
def test_a_kernel_named_in_functions_fails_before_nvcc_runs_as_the_whole_build_fails(tmp_path):
    """The corpus's commonest failure: ``functions=`` names the ``__global__`` kernel that
    only ``cuda_sources`` holds. Both ways a compile error; the check's names main.cpp's
    line and column as g++ does, and no unit is compiled."""
    cu = textwrap.dedent("""
        extern "C" __global__ void relu_kernel(const float* __restrict__ x, float* y, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) y[i] = fmaxf(0.f, x[i]);
        }
    """)
    args = dict(name="km_ff_cu", cpp_sources="", cuda_sources=cu, functions=["relu_kernel"],
                extra_cuda_cflags=["-O3"])
    fast = _build(tmp_path / "on", "on", args, cuda=True)
    slow = _build(tmp_path / "off", "off", args, cuda=True)
    assert fast["outcome"] == slow["outcome"] == "compile_error"
    assert fast["log"]["fail_fast"] == "unbound: relu_kernel" and "compiled" not in fast["log"]
    where = next(line for line in fast["error"].splitlines() if ": error: " in line)
    assert re.fullmatch(r"main\.cpp:4:\d+: error: 'relu_kernel' was not declared in this scope", where)
    assert where in _quotes(slow["error"])


@pytest.mark.slow
@pytest.mark.skipif(_cuda_home() is None, reason="needs nvcc (CUDA's compilers; no GPU)")
def test_a_module_in_cuda_sources_beside_functions_fails_before_compiling_as_the_build_does(tmp_path):
    """cuda_sources writes PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) and functions= asks torch
    for its own: both ways a compile error (the real build's at the link)."""
    cu = CU_MODULE.replace("__global__ void k(float* x) {}", "__global__ void k(float* x) { x[threadIdx.x] = 0.f; }")
    args = dict(name="km_ff_cumod", cpp_sources="torch::Tensor run(torch::Tensor x);", cuda_sources=cu,
                functions=["run"])
    fast = _build(tmp_path / "on", "on", args, cuda=True)
    slow = _build(tmp_path / "off", "off", args, cuda=True)
    assert fast["outcome"] == slow["outcome"] == "compile_error"
    assert fast["log"]["fail_fast"] == "module in cuda_sources" and "compiled" not in fast["log"]
    assert "PyInit_km_ff_cumod" in slow["error"]


@pytest.mark.slow
def test_a_build_directory_call_that_surely_fails_is_answered_before_torch_compiles_it(torch_headers, tmp_path):
    # torch builds such a call in the candidate's folder (inline_build leaves it to torch); its
    # main.cpp is the one assembled here, so the same checks answer first (CUDA-L1: 3 calls,
    # 33-45 s each of torch's compile before)
    args = {**UNDECLARED[-1], "name": "km_ff_dir", "build_directory": str(tmp_path / "own")}
    (tmp_path / "own").mkdir()
    fast = _build(torch_headers(tmp_path / "on"), "on", args)
    assert fast["outcome"] == "compile_error" and fast["log"]["fail_fast"] == "module twice"
    assert "compiled" not in fast["log"] and not any((tmp_path / "own").iterdir())


def test_a_build_directory_call_is_checked_then_left_to_torch(monkeypatch):
    seen = []

    class Builder:
        times: dict = {}

        def precheck(self, main_cpp, cuda_cu, flags):
            seen.append(main_cpp)

        def build(self, *args, **kwargs):
            raise AssertionError("a build_directory call is torch's to build")

    monkeypatch.setattr(inline_build, "_BUILDER", Builder())
    monkeypatch.setattr(inline_build, "torch_flags", lambda *a, **k: {"cxx": "c++", "cflags": []})
    call = dict(name="km_dir", cpp_sources="int f();", functions=["f"], build_directory="/nonexistent/own")
    with pytest.raises(inline_build.Unsupported, match="build_directory"):
        inline_build.build_only(**call)
    assert len(seen) == 1 and "wrap_pybind_function(f)" in seen[0]

    def sure(self, main_cpp, cuda_cu, flags):
        raise CompileError("[main.cpp]\nmain.cpp:4:1: error: redefinition of 'PyObject* PyInit_km_dir()'", ("binding",))

    monkeypatch.setattr(Builder, "precheck", sure)
    with pytest.raises(CompileError, match="redefinition"):
        inline_build.build_only(**call)
    monkeypatch.setattr(inline_build, "_FAIL_FAST", False)
    with pytest.raises(inline_build.Unsupported):
        inline_build.build_only(**call)


def test_a_cpp_only_unit_linked_for_cuda_is_checked_then_left_to_torch(monkeypatch):
    """with_cuda=True and no cuda_sources (CUDA code in cpp_sources: cuda-l1 l40-L1-95, with its own
    module beside functions=[...]): torch builds it itself, inside the run, as with build_directory;
    the same checks answer first (18.5 s of torch's compile under the run's GPU share, session 28)."""
    seen = []

    class Builder:
        times: dict = {}

        def precheck(self, main_cpp, cuda_cu, flags):
            seen.append((main_cpp, cuda_cu))
            if main_cpp.count("PYBIND11_MODULE") > 1:  # its own beside torch's generated one
                raise CompileError("[main.cpp]\nmain.cpp:9:1: error: redefinition of 'PyObject* PyInit_km_cu()'",
                                   ("binding",))

        def build(self, *args, **kwargs):
            raise AssertionError("torch builds a C++-only unit linked for CUDA")

    monkeypatch.setattr(inline_build, "_BUILDER", Builder())
    monkeypatch.setattr(inline_build, "torch_flags", lambda *a, **k: {"cxx": "c++", "cflags": []})
    call = dict(name="km_cu", cpp_sources="torch::Tensor forward(torch::Tensor x);", functions=["forward"],
                with_cuda=True)
    with pytest.raises(inline_build.Unsupported, match="with_cuda=True without CUDA sources"):
        inline_build.build_only(**call)
    assert len(seen) == 1 and seen[0][1] is None
    own_module = "torch::Tensor forward(torch::Tensor x);\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {}"
    with pytest.raises(CompileError, match="redefinition"):
        inline_build.build_only(**{**call, "cpp_sources": own_module})
    monkeypatch.setattr(inline_build, "_FAIL_FAST", False)
    with pytest.raises(inline_build.Unsupported):
        inline_build.build_only(**{**call, "cpp_sources": own_module})


def test_the_identifiers_process_does_not_wait_for_its_own_maker_lock(tmp_path, monkeypatch):
    """The run's identifiers process holds the `maker` lock builds wait on; asking with
    defer=False (build_prepare.prepare_identifiers) it makes them at once, and a build that
    would wait gives up on a maker past `_IDENTS_WAIT_S` and makes its own."""
    from kernelmill.verify.build import inline_build

    calls = fake_preprocessor(monkeypatch)
    monkeypatch.setattr(inline_build, "_IDENTS_WAIT_S", 0.3)
    maker = InlineBuilder(tmp_path)
    held = maker.cache.try_lock_fd("idents", inline_build.IDENTS_MAKER)
    assert held is not None
    try:
        assert maker.identifiers_maker_busy()
        known = maker.header_identifiers("c++", [], defer=False)
        assert known is not None and len(calls) == 1 and maker.times["idents_s"] < 0.3
        stuck = InlineBuilder(tmp_path)
        assert stuck.header_identifiers("c++", ["-DY"]) is not None  # another flag set: none made
        assert len(calls) == 2 and stuck.log["idents_made"] and stuck.times["idents_s"] >= 0.3
    finally:
        import os

        os.close(held)
    assert not maker.identifiers_maker_busy()

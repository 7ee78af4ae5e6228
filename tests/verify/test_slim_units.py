"""verify/build/slim_units.py: a C++ extension's own code against torch/types.h, its binding made
once per signature list. The plan on its own (which builds take the path, the units'
text), then real builds: the module answers as torch's own build does, a second candidate
with the same signature list compiles no binding, and what does not compile slim goes back
to torch's units."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kernelmill.verify.build.inline_build import assemble
from kernelmill.verify.build import slim_units
from kernelmill.verify.build.slim_units import plan

CODE = """
#include <torch/extension.h>
torch::Tensor relu_fwd(const torch::Tensor& x) { return x.clamp_min(0); }
std::vector<torch::Tensor> two(torch::Tensor a, int64_t n, double s);
std::vector<torch::Tensor> two(torch::Tensor a, int64_t n, double s) { return {a * s, a + n}; }
void noop(torch::Tensor) {}
"""


def _plan(code=CODE, functions=("relu_fwd", "two", "noop"), name="ext_a", **kw):
    main, _ = assemble(name, [code], None, list(functions) if isinstance(functions, tuple) else functions, **kw)
    return plan(main, name)


def test_generated_bindings_become_forwarders_a_shared_binding_and_an_entry_point():
    p = _plan()
    assert "#include <torch/extension.h>" not in p.slim and p.slim.startswith("#include <torch/types.h>")
    assert "km_fn0(const torch::Tensor & a0) { return relu_fwd(a0); }" in p.slim
    assert ("std::vector<torch::Tensor> km_fn1(torch::Tensor a0, int64_t a1, double a2) "
            "{ return two(a0, a1, a2); }") in p.slim
    assert "void km_fn2(torch::Tensor a0) { noop(a0); }" in p.slim
    assert "torch::wrap_pybind_function(km_fn1)" in p.binding and "ext_a" not in p.binding
    # the binding needs torch's pybind11 casters only, not the full header (15.9 s -> 5.0 s to
    # compile on the 2-core VM; the longest unit of a cold build on the device, session_2026-11-30e)
    assert p.binding.startswith(slim_units.BINDING_HEADERS) and "torch/extension.h" not in p.binding
    assert "std::vector<at::Tensor> km_fn1(at::Tensor, int64_t, double);" in p.binding
    assert 'PyInit_ext_a() { return km_module_init("ext_a"); }' in p.shim
    assert '"relu_fwd", "relu_fwd", "two", "two", "noop", "noop"' in p.shim
    # another candidate, other names and bodies, the same types: the same binding text
    other = _plan(CODE.replace("relu_fwd", "act").replace("two", "pair").replace("noop", "nop"),
                  ("act", "pair", "nop"), "ext_b")
    assert other.binding == p.binding and other.shim != p.shim


def test_docs_and_the_error_handling_follow_torchs_generated_lines():
    p = _plan(functions={"relu_fwd": "the ReLU"})
    assert '"relu_fwd", "the ReLU"' in p.shim
    bare = _plan(functions=["relu_fwd"], with_pytorch_error_handling=False)
    assert "m.def(km_fn_names[0], km_fn0, km_fn_names[1])" in bare.binding


@pytest.mark.parametrize("code,functions", [
    (CODE + "\ntorch::Tensor relu_fwd(torch::Tensor x, int k);", ("relu_fwd",)),  # overloaded
    ("struct S {}; S make(int a);", ("make",)),  # a type of its own
    ("torch::Tensor f(torch::Tensor x, int k = 2);", ("f",)),  # a default argument
    ("namespace n { torch::Tensor f(torch::Tensor x); }", ("f",)),  # not at the top level
    ("torch::Tensor f(torch::Tensor x);", ("g",)),  # not declared at all
    (CODE, None),  # no functions=: a module of the candidate's own
])
def test_what_the_path_does_not_read_goes_to_torchs_units(code, functions):
    assert _plan(code, functions) is None


PROG = r'''
import json, sys, torch
from kernelmill.verify.build import inline_build
inline_build.install(sys.argv[1], slim=sys.argv[4] == "slim")
from torch.utils.cpp_extension import load_inline
ext = load_inline(name=sys.argv[2], cpp_sources=sys.argv[3], functions=["act", "pair"])
x = torch.randn(64)
a, b = ext.pair(x, 3, 0.5)
out = {"act": ext.act(x).tolist(), "want_act": torch.relu(x).tolist(),
       "pair": [a.tolist(), b.tolist()], "want_pair": [(x * 0.5).tolist(), (x + 3).tolist()],
       "log": inline_build.builder_log()}
try:
    ext.act(x[::2])
except RuntimeError as exc:
    out["raised"] = str(exc).splitlines()[0]
print(json.dumps(out))
'''
CANDIDATE = r'''
#include <torch/extension.h>
torch::Tensor act(torch::Tensor x) {
  TORCH_CHECK(x.is_contiguous(), "x must be contiguous");
  return x.clamp_min(0);
}
std::vector<torch::Tensor> pair(const torch::Tensor& a, int64_t n, double s) { return {a * s, a + n}; }
'''


def _build(cache, name, src, mode="slim"):
    res = subprocess.run([sys.executable, "-c", PROG, str(cache), name, src, mode], capture_output=True, text=True,
                         timeout=900)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_slim_builds_answer_as_torchs_units_and_share_their_binding(tmp_path, torch_headers):
    cache = torch_headers(tmp_path / "cache")
    first = _build(cache, "km_slim_a", CANDIDATE)
    assert first["log"]["slim"] is True and sorted(first["log"]["compiled"]) == ["shim", "sigbind", "slim"]
    assert first["act"] == first["want_act"] and first["pair"] == first["want_pair"]
    assert first["raised"] == "x must be contiguous"  # TORCH_CHECK through the same error translation
    # another candidate with the same signature list: its own code and entry point, no binding compiled
    second = _build(cache, "km_slim_b", CANDIDATE.replace("clamp_min(0)", "relu()"))
    assert second["log"]["slim"] is True and "sigbind" in second["log"]["reused"]
    assert sorted(second["log"]["compiled"]) == ["shim", "slim"] and second["act"] == second["want_act"]
    # torch's units, the path turned off: the same answers
    off = _build(cache, "km_slim_c", CANDIDATE, mode="off")
    assert "slim" not in off["log"] and off["log"]["compiled"] == ["binding"]
    assert off["raised"] == first["raised"]


@pytest.mark.slow
def test_code_that_needs_the_full_header_goes_back_to_torchs_units(tmp_path, torch_headers):
    # torch::nn is declared by torch/extension.h, not by torch/types.h: the slim unit fails
    needs_nn = CANDIDATE.replace("return x.clamp_min(0);", "return torch::nn::functional::relu(x);")
    out = _build(torch_headers(tmp_path / "cache"), "km_slim_d", needs_nn)
    assert out["log"]["slim"] is False and "binding" in out["log"]["compiled"]
    assert out["act"] == out["want_act"] and out["pair"] == out["want_pair"]
    # code naming pybind11 is not tried slim at all
    uses_pybind = CANDIDATE + "\nstatic pybind11::object km_none() { return pybind11::none(); }\n"
    assert plan(assemble("km_slim_e", [uses_pybind], None, ["act", "pair"])[0], "km_slim_e") is None


PREPARED = '''
import torch
from torch.utils.cpp_extension import load_inline
SRC = """
#include <torch/extension.h>
torch::Tensor act(torch::Tensor x) { return x.clamp_min(0); }
"""
ext = load_inline(name="ext", cpp_sources=SRC, functions=["act"], extra_cflags=["-O2"])
other = load_inline("computed", make_source(), functions=["act"])  # not a literal: left out
cu = load_inline(name="cu", cpp_sources=SRC, cuda_sources="__global__ void k() {}", functions=["act"])
'''


def test_binding_objects_made_ahead_are_the_ones_a_build_looks_for(tmp_path, fake_compiler):
    """build_prepare reads the C++ calls' signature lists without running the candidate and
    compiles their binding objects under the key a later build of any name computes."""
    from kernelmill.verify.build import build_prepare, inline_build

    specs = build_prepare.binding_specs(PREPARED)
    assert [s for s, _ in specs] == [(False, ("-O2",), ()), (True, (), ())]  # the computed call left out
    specs = specs[:1]
    assert build_prepare.prepare_bindings(tmp_path, specs + specs) == {"built": 1, "cached": 0, "failed": 0}
    assert build_prepare.prepare_bindings(tmp_path, specs) == {"built": 0, "cached": 1, "failed": 0}
    # a candidate named otherwise, with another body, builds: its binding object is found
    inline_build.set_fingerprint("")
    flags = inline_build.torch_flags("km_later", False, ["-O2"], [], None, None)
    main, _ = inline_build.assemble("km_later", ["torch::Tensor act(torch::Tensor y) { return y * 0; }"], None, ["act"])
    builder = inline_build.InlineBuilder(tmp_path)
    n = len(fake_compiler)
    builder.build("km_later", main, None, flags)
    assert builder.log["slim"] is True and builder.log["reused"] == ["sigbind"]
    assert sorted(builder.log["compiled"]) == ["shim", "slim"] and len(fake_compiler) == n + 3  # 2 units, the link


_HOLDER = """
import os, sys, time
from kernelmill.verify.build.buildcache import BuildCache
if sys.argv[3] == "idle":
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
fd = BuildCache(sys.argv[1]).try_lock_fd("obj", sys.argv[2])
open(sys.argv[4], "w").close()  # holding it
time.sleep(float(sys.argv[5]))
open(sys.argv[4] + ".released", "w").close()
os.close(fd)
"""


def _busy_binding(tmp_path, priority: str, hold_s: float):
    """A build whose binding object's lock another process holds at `priority`; the
    builder, its inputs, the holder process and the file it writes as it lets go."""
    import time

    from kernelmill.verify.build import inline_build
    from kernelmill.verify.build.slim_units import plan

    inline_build.set_fingerprint("")
    flags = inline_build.torch_flags("km_busy", False, [], [], None, None)
    main, _ = inline_build.assemble("km_busy", ["torch::Tensor act(torch::Tensor y) { return y; }"], None, ["act"])
    builder = inline_build.InlineBuilder(tmp_path / "cache")
    _k, _f, src, prefix, fl, post, _p = inline_build._slim_units(plan(main, "km_busy"), flags,
                                                                 inline_build.shlex.split(flags["cxx"]))[1]
    key = builder.unit_key("sigbind", src, prefix, fl, post)
    held = tmp_path / "held"
    proc = subprocess.Popen([sys.executable, "-c", _HOLDER, str(tmp_path / "cache"), key, priority, str(held),
                             str(hold_s)])
    for _ in range(600):
        if held.exists() or proc.poll() is not None:
            break
        time.sleep(0.05)
    assert held.exists(), "the holder process did not take the lock"
    assert builder.cache.holder("obj", key) == proc.pid
    return builder, main, flags, proc, held.with_name("held.released")


def test_a_build_compiles_its_own_binding_beside_an_idle_priority_maker(tmp_path, fake_compiler):
    """build_prepare makes binding objects at idle priority; a build that found one held
    gave up the slim path for torch/extension.h's merged unit (11 of 26 cold builds,
    session_2026-11-30f). It compiles its own copy now, without waiting for the maker."""
    builder, main, flags, proc, released = _busy_binding(tmp_path, "idle", 60)
    try:
        builder.build("km_busy", main, None, flags)
        assert not released.exists()  # the maker still holds its lock: not waited for
        assert builder.log["slim"] is True and builder.log["sigbind_own_copy"] is True
        from kernelmill.verify.runner import _build_facts
        assert _build_facts(builder.log)["sigbind_own_copy"] is True  # and the verdict says so (measurement.build)
        assert sorted(builder.log["compiled"]) == ["shim", "sigbind", "slim"]
    finally:
        proc.kill()
        proc.wait()


def test_a_build_waits_for_a_binding_another_build_is_compiling(tmp_path, fake_compiler, monkeypatch):
    """A holder at the build's own priority (another build of the batch) is waited for:
    the binding is compiled once, the slim path kept."""
    from kernelmill.verify.build import inline_build

    builder, main, flags, proc, released = _busy_binding(tmp_path, "same", 1.0)
    order = []
    run = inline_build._run
    monkeypatch.setattr(inline_build, "_run", lambda cmd, cwd: (order.append(
        (next((c for c in cmd if c.endswith(".cpp")), "link"), released.exists())), run(cmd, cwd))[1])
    try:
        builder.build("km_busy", main, None, flags)
    finally:
        proc.wait()
    assert builder.log["slim"] is True and "sigbind_own_copy" not in builder.log
    assert ("bind.cpp", True) in order  # compiled only after the holder let go (it published nothing)
    assert "sigbind" in builder.log["compiled"] and "sigbind" not in builder.log.get("reused", [])


def test_a_run_makes_binding_objects_ahead_even_into_a_new_cache(tmp_path, monkeypatch):
    """The runner hands build_prepare the batch's binding objects through a file in a cache
    folder no build has made yet (a fresh cache: a verification run's first thing)."""
    from kernelmill.verify.build import build_prepare

    started = []
    monkeypatch.setattr(build_prepare.subprocess, "Popen", lambda argv, **kw: started.append(argv))
    build_prepare.start_background(tmp_path / "new" / "build", [], bindings=build_prepare.binding_specs(PREPARED))
    argv = started[0]
    path = argv[argv.index("--bindings") + 1]
    assert json.loads(open(path).read())[0][0] == [False, ["-O2"], []]


# -- CUDA extensions: the kernel unit as before, the host code against torch/types.h ------

CU = """
#include <torch/extension.h>
#include <cuda_runtime.h>
__global__ void twice(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.f * x[i];
}
torch::Tensor twice_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "twice_cuda: x must be a CUDA tensor");
    auto y = torch::empty_like(x);
    twice<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    return y;
}
"""
DECL = "torch::Tensor twice_cuda(torch::Tensor x);"


# a module the candidate wrote (no functions=): bound by name, the Python names its own
WRITTEN = """
torch::Tensor add_scalar(const torch::Tensor& x, double s) { return x + s; }
PYBIND11_MODULE(TORCH_EXTENSION_NAME, mod) {
    mod.def("twice", &twice_cuda, "doubles x (CUDA)");
    mod.def("add", add_scalar);
}
"""


def _cuda_plan(cpp=DECL, cu=CU, agree=True, functions=("twice_cuda",)):
    from kernelmill.verify.build.cuda_split import split_cuda_unit

    main, cuda = assemble("ext_cu", cpp, cu, list(functions) if functions is not None else None)
    split = split_cuda_unit(cuda)
    return plan(main, "ext_cu", split.host_unit if split else None, agree)


def test_a_split_cuda_extension_with_declarations_only_is_one_unit_after_the_host_code():
    p = _cuda_plan()
    assert p.merged and p.host is None and "#include <torch/extension.h>" not in p.slim
    body = p.slim.index("torch::Tensor twice_cuda(torch::Tensor x) {")
    # the host code first as it compiled alone, then main.cpp's declaration, then the forwarder
    assert body < p.slim.index("torch::Tensor twice_cuda(torch::Tensor x);") < p.slim.index("km_fn0")
    assert "__km_launch_twice(" in p.slim and "__global__" not in p.slim  # the kernel stays in kernel.cu
    assert p.binding == _plan(
        "#include <torch/extension.h>\ntorch::Tensor f(torch::Tensor x);", ("f",)).binding  # one per signature list


def test_a_binding_unit_with_code_or_other_flags_keeps_the_host_unit_apart():
    code = "#include <vector>\n" + DECL + "\ntorch::Tensor twice_plus(torch::Tensor x) { return twice_cuda(x) + 1; }"
    for p in (_cuda_plan(cpp=code, functions=("twice_cuda", "twice_plus")), _cuda_plan(agree=False)):
        assert not p.merged and p.host.startswith("#include <torch/types.h>")
        assert "__km_launch_twice(" in p.host and "km_fn0" in p.slim and "__km_launch" not in p.slim


def test_a_module_the_candidate_wrote_binds_its_functions_under_its_names():
    for p in (_cuda_plan(cpp="", cu=CU + WRITTEN, functions=None),  # in cuda_sources (the host part)
              _cuda_plan(cpp=DECL + "\ntorch::Tensor add_scalar(const torch::Tensor& x, double s);" + WRITTEN.replace(
                  "torch::Tensor add_scalar(const torch::Tensor& x, double s) { return x + s; }", ""),
                  cu=CU + "\ntorch::Tensor add_scalar(const torch::Tensor& x, double s) { return x + s; }",
                  functions=None)):  # in cpp_sources, with the declarations
        assert p is not None and p.merged and "PYBIND11_MODULE" not in p.slim
        assert '"twice", "doubles x (CUDA)", "add", nullptr' in p.shim
        assert "return twice_cuda(a0);" in p.slim and "return add_scalar(a0, a1);" in p.slim
        assert "m.def(km_fn_names[0], km_fn0, km_fn_names[1])" in p.binding  # bare, as the candidate bound it
    assert "wrap_pybind_function" not in p.binding


@pytest.mark.parametrize("module", [
    'PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("twice", &twice_cuda, py::arg("x")); }',  # keyword names
    'PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("twice", [](torch::Tensor x) { return x; }); }',  # a lambda
    'PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("twice", &twice_cuda); m.attr("n") = 3; }',  # more than defs
    'PYBIND11_MODULE(other_name, m) { m.def("twice", &twice_cuda); }',  # not torch's module name
])
def test_a_written_module_doing_more_than_binding_by_name_keeps_torchs_units(module):
    assert _cuda_plan(cpp="", cu=CU + module, functions=None) is None


@pytest.mark.parametrize("cu", [
    CU.replace("torch::Tensor twice_cuda(", "static torch::Tensor twice_cuda("),  # internal: torch's import fails
    CU.replace("torch::Tensor twice_cuda(", "inline torch::Tensor twice_cuda("),  # not emitted in torch's host unit
    CU + "\nstatic pybind11::object km_none() { return pybind11::none(); }\n",  # needs the full header
    CU + "\nPyObject* km_raw() { return nullptr; }\n",  # Python's API
])
def test_host_code_whose_meaning_or_header_would_change_keeps_torchs_units(cu):
    assert _cuda_plan(cu=cu) is None


def test_an_unsplit_cuda_unit_keeps_its_nvcc_unit_and_binds_slim():
    unsplit = CU.replace("twice<<<", "auto k = twice; k<<<")  # a kernel used other than by a launch
    p = _cuda_plan(cu=unsplit)
    assert p is not None and not p.merged and p.host is None and "km_fn0" in p.slim


CUDA_FLAGS = {"cxx": "c++", "cflags": ["-DTORCH_EXTENSION_NAME=ext_cu", "-std=c++17"], "post_cflags": ["-fPIC"],
              "ldflags": ["-shared"], "nvcc": "nvcc", "cuda_cflags": ["-DTORCH_EXTENSION_NAME=ext_cu", "-std=c++17", "-O3"],
              "cuda_post_cflags": ["-arch=sm_90"]}


@pytest.fixture
def unit_tools(unit_compiler):
    return unit_compiler  # conftest.py: writes its output, fails on a unit holding FAIL_ME


def test_the_builder_compiles_a_cuda_extension_as_kernel_slim_binding_and_entry_point(tmp_path, unit_tools):
    from kernelmill.verify.build import inline_build

    main, cuda = assemble("ext_cu", DECL, CU, ["twice_cuda"])
    builder = inline_build.InlineBuilder(tmp_path)
    assert (builder.build("ext_cu", main, cuda, CUDA_FLAGS) / "ext_cu.so").exists()
    assert builder.log["slim"] is True and builder.log["cuda_split"] is True
    assert sorted(builder.log["compiled"]) == ["kernel", "shim", "sigbind", "slim"]
    # another candidate of the same task: its kernel and host code, the binding object and
    # the entry point (same module name) reused
    unit_tools.clear()
    again = inline_build.InlineBuilder(tmp_path)
    main2, cuda2 = assemble("ext_cu", DECL, CU.replace("2.f", "3.f").replace("must be", "must be a"), ["twice_cuda"])
    again.build("ext_cu", main2, cuda2, CUDA_FLAGS)
    assert sorted(c for c in unit_tools if c) == ["kernel.cu", "slim.cpp"]
    assert sorted(again.log["reused"]) == ["shim", "sigbind"]


def test_a_host_error_goes_back_to_torchs_units_a_kernel_error_does_not(tmp_path, unit_tools, monkeypatch):
    import time

    from kernelmill.verify.build import inline_build

    # torch's units compile side by side, and the first error decides the build: a unit not
    # yet started then starts no compiler. So that main.cpp is seen compiled whatever the
    # threads' order, host.cpp's compiler fails only once main.cpp's has started
    run = inline_build._run

    def host_after_main(cmd, cwd):
        if any(c.endswith("host.cpp") for c in cmd):
            t_end = time.monotonic() + 10
            while "main.cpp" not in unit_tools and time.monotonic() < t_end:
                time.sleep(0.005)
        return run(cmd, cwd)

    monkeypatch.setattr(inline_build, "_run", host_after_main)
    main, cuda = assemble("ext_cu", DECL, CU.replace("return y;", 'TORCH_CHECK(true, "FAIL_ME"); return y;'),
                          ["twice_cuda"])
    builder = inline_build.InlineBuilder(tmp_path)
    with pytest.raises(inline_build.CompileError, match=r"\[host.cpp\]"):  # torch's units' error
        builder.build("ext_cu", main, cuda, CUDA_FLAGS)
    assert builder.log["slim"] is False and {"slim.cpp", "unit.cpp", "host.cpp", "main.cpp"} <= set(unit_tools)
    unit_tools.clear()
    main, cuda = assemble("ext_cu", DECL, CU.replace("if (i < n)", "if (i < n) FAIL_ME;"), ["twice_cuda"])
    builder = inline_build.InlineBuilder(tmp_path)
    with pytest.raises(inline_build.CompileError, match=r"\[kernel.cu\]"):
        builder.build("ext_cu", main, cuda, CUDA_FLAGS)
    # nvcc's unit is the same in torch's units: no second build of the host code
    assert builder.log["slim"] is False and "merged" not in builder.log
    assert not {"unit.cpp", "host.cpp", "main.cpp"} & set(unit_tools)


def test_binding_objects_of_cuda_calls_are_made_ahead_under_their_flags():
    from kernelmill.verify.build import build_prepare

    code = f'''
from torch.utils.cpp_extension import load_inline
CU = """{CU}"""
ext = load_inline(name="e", cpp_sources="{DECL}", cuda_sources=CU, functions=["twice_cuda"],
                  extra_cuda_cflags=["-O3", "--use_fast_math"])
'''
    specs = build_prepare.binding_specs(code)
    assert [s for s, _ in specs] == [(True, (), ("-O3", "--use_fast_math"))]
    assert specs[0][1] == _cuda_plan().binding
    # a module written in the CUDA source: its binding object too
    written = code.replace('cpp_sources="{DECL}"'.format(DECL=DECL), 'cpp_sources=""').replace(
        ', functions=["twice_cuda"]', "").replace('CU = """{}'.format(CU), 'CU = """{}'.format(CU + WRITTEN))
    assert [b for _s, b in build_prepare.binding_specs(written)] == [_cuda_plan(cpp="", cu=CU + WRITTEN, functions=None).binding]


CU_PROG = r'''
import json, os, sys, torch
import torch.utils.cpp_extension as ce
ce.CUDA_HOME = sys.argv[2]
os.environ["TORCH_CUDA_ARCH_LIST"] = "9.0"
from kernelmill.verify.build import inline_build
from kernelmill.verify.build.inline_build import assemble, torch_flags
inline_build.set_fingerprint("")
flags = torch_flags("km_slim_cu", True, [], ["-O3"], None, None)
flags["ldflags"] = [f for f in flags["ldflags"] if f not in ("-lc10_cuda", "-ltorch_cuda")]  # a CPU torch has none
main, cuda = assemble("km_slim_cu", sys.argv[3], sys.argv[4], None)  # the module written in cuda_sources
builder = inline_build.InlineBuilder(sys.argv[1])
ext = ce._import_module_from_library("km_slim_cu", str(builder.build("km_slim_cu", main, cuda, flags)), True)
try:
    ext.twice(torch.ones(3))
except RuntimeError as exc:
    print(json.dumps({"raised": str(exc).splitlines()[0], "log": builder.log, "doc": ext.twice.__doc__,
                      "sum": ext.add(torch.ones(2), 2.5).tolist()}))
'''


@pytest.mark.slow
@pytest.mark.skipif(not __import__("shutil").which("nvcc"), reason="needs nvcc (CUDA's compilers; no GPU)")
def test_a_slim_cuda_extension_compiles_links_and_answers_through_torchs_error_handling(tmp_path):
    """Real compilers on a machine without a GPU: nvcc's kernel unit, the host code against
    torch/types.h, the binding object and the entry point link into a module whose functions
    answer under the names the candidate's own PYBIND11_MODULE gave them, and raise its
    TORCH_CHECK message for a CPU tensor, as torch's build does."""
    import shutil
    from pathlib import Path

    home = str(Path(shutil.which("nvcc")).resolve().parents[1])
    if not (Path(home) / "include" / "cuda_runtime.h").exists():  # a wrapper script: the real one's folder
        home = next((str(p) for p in sorted(Path("/usr/local").glob("cuda*")) if (p / "include/cuda_runtime.h").exists()), home)
    res = subprocess.run([sys.executable, "-c", CU_PROG, str(tmp_path / "cache"), home, "", CU + WRITTEN],
                         capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["raised"] == "twice_cuda: x must be a CUDA tensor" and out["sum"] == [3.5, 3.5]
    assert out["doc"].startswith("twice(arg0: torch.Tensor) -> torch.Tensor") and "doubles x" in out["doc"]
    assert out["log"]["slim"] is True and sorted(out["log"]["compiled"]) == ["kernel", "shim", "sigbind", "slim"]


@pytest.mark.gpu
def test_slim_cuda_extensions_answer_on_the_gpu_as_the_reference(tmp_path, monkeypatch):
    """On the GPU: the generated bindings and a module the candidate wrote, built slim,
    give exactly the reference's answers; a CPU tensor raises the candidate's TORCH_CHECK."""
    import torch

    from kernelmill.verify.build import inline_build

    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "{}.{}".format(*torch.cuda.get_device_capability()))
    builder = inline_build.install(tmp_path / "cache", slim=True)
    import torch.utils.cpp_extension as ce

    try:
        ext = ce.load_inline(name="km_slim_gpu_a", cpp_sources=DECL, cuda_sources=CU, functions=["twice_cuda"])
        assert builder.log["slim"] is True and builder.log["cuda_split"] is True, builder.log
        x = torch.randn(100_003, device="cuda")
        assert torch.equal(ext.twice_cuda(x), 2 * x)
        with pytest.raises(RuntimeError, match="twice_cuda: x must be a CUDA tensor"):
            ext.twice_cuda(x.cpu())
        written = ce.load_inline(name="km_slim_gpu_b", cpp_sources="", cuda_sources=CU + WRITTEN)
        assert builder.log["slim"] is True
        assert torch.equal(written.twice(x), 2 * x) and torch.equal(written.add(x, 0.5), x + 0.5)
    finally:
        ce.load_inline = inline_build._ORIGINAL


@pytest.mark.gpu
def test_a_kernel_error_on_the_slim_path_is_nvccs_error_after_one_build(tmp_path, monkeypatch):
    import torch

    from kernelmill.verify.build import inline_build

    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "{}.{}".format(*torch.cuda.get_device_capability()))
    builder = inline_build.install(tmp_path / "cache", slim=True)
    import torch.utils.cpp_extension as ce

    try:
        with pytest.raises(RuntimeError, match=r"\[kernel.cu\]") as err:
            ce.load_inline(name="km_slim_gpu_bad", cpp_sources=DECL,
                           cuda_sources=CU.replace("if (i < n)", "if (i < n_undeclared)"), functions=["twice_cuda"])
        assert "n_undeclared" in str(err.value)
        assert builder.log["slim"] is False and "merged" not in builder.log and builder.log["compiles"] == 1
        assert "fallback" not in builder.log
    finally:
        ce.load_inline = inline_build._ORIGINAL


def test_a_binding_object_that_failed_sends_later_builds_to_torchs_units_at_once(tmp_path, unit_tools, monkeypatch):
    """A pybind11 the binding text does not suit fails once; the next candidates of that
    signature list compile no slim unit in vain."""
    from kernelmill.verify.build import inline_build, slim_units

    real = slim_units._binding
    monkeypatch.setattr(slim_units, "_binding", lambda bound, sigs: real(bound, sigs) + "\nFAIL_ME\n")
    main, cuda = assemble("ext_cu", DECL, CU, ["twice_cuda"])
    first = inline_build.InlineBuilder(tmp_path)
    first.build("ext_cu", main, cuda, CUDA_FLAGS)
    assert first.log["slim"] is False and "FAIL_ME" in first.log["slim_error"] and first.log["merged"] is True
    unit_tools.clear()
    main2, cuda2 = assemble("ext_cu", DECL, CU.replace("must be", "must be a"), ["twice_cuda"])
    second = inline_build.InlineBuilder(tmp_path)
    second.build("ext_cu", main2, cuda2, CUDA_FLAGS)
    assert second.log["slim"] is False and sorted(c for c in unit_tools if c) == ["unit.cpp"]  # the merged unit only



def test_a_unit_that_starts_after_its_build_was_decided_starts_no_compiler(tmp_path, unit_tools, monkeypatch):
    """A pool thread of a build whose outcome another unit's error decided (slim failed and the
    merged units were built meanwhile) must not start its compiler late: on a slow machine it
    did, after the build had returned."""
    from kernelmill.verify.build import inline_build

    started = []
    stand_in = inline_build._run
    monkeypatch.setattr(inline_build, "_run", lambda cmd, cwd: started.append(cmd) or stand_in(cmd, cwd))
    stop = inline_build._Stop()
    stop.set()
    inline_build._TLS.stop = stop
    try:
        builder = inline_build.InlineBuilder(tmp_path)
        with pytest.raises(inline_build._Cancelled):
            builder.compile_unit("shim", "shim.cpp", "int f() { return 1; }", ["g++"], ["-O2"], [])
    finally:
        inline_build._TLS.stop = None
    assert started == [] and unit_tools == []
    assert builder.cache.get("obj", builder.unit_key("shim", "int f() { return 1; }", ["g++"], ["-O2"], [])) is None

"""verify/slim_units.py: a C++ extension's own code against torch/types.h, its binding made
once per signature list. The plan on its own (which builds take the path, the units'
text), then real builds: the module answers as torch's own build does, a second candidate
with the same signature list compiles no binding, and what does not compile slim goes back
to torch's units."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kernelmill.verify.inline_build import assemble
from kernelmill.verify.slim_units import plan

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
from kernelmill.verify import inline_build
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


def test_slim_builds_answer_as_torchs_units_and_share_their_binding(tmp_path):
    cache = tmp_path / "cache"
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


def test_code_that_needs_the_full_header_goes_back_to_torchs_units(tmp_path):
    uses_pybind = CANDIDATE + "\nstatic pybind11::object km_none() { return pybind11::none(); }\n"
    out = _build(tmp_path / "cache", "km_slim_d", uses_pybind)
    assert out["log"]["slim"] is False and "binding" in out["log"]["compiled"]
    assert out["act"] == out["want_act"] and out["pair"] == out["want_pair"]


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
    from kernelmill.verify import build_prepare, inline_build

    specs = build_prepare.binding_specs(PREPARED)
    assert [s for s, _ in specs] == [(False, ("-O2",), ())]  # the computed and the CUDA calls left out
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


def test_a_build_does_not_wait_for_a_binding_object_being_made(tmp_path, fake_compiler):
    from kernelmill.verify import inline_build
    from kernelmill.verify.slim_units import plan

    inline_build.set_fingerprint("")
    flags = inline_build.torch_flags("km_busy", False, [], [], None, None)
    main, _ = inline_build.assemble("km_busy", ["torch::Tensor act(torch::Tensor y) { return y; }"], None, ["act"])
    builder = inline_build.InlineBuilder(tmp_path)
    _k, _f, src, prefix, fl, post, _p = inline_build._slim_units(plan(main, "km_busy"), flags,
                                                                 inline_build.shlex.split(flags["cxx"]))[1]
    with builder.cache.try_lock("obj", builder.unit_key("sigbind", src, prefix, fl, post)):  # being made elsewhere
        builder.build("km_busy", main, None, flags)
    assert builder.log["slim"] is False and builder.log["compiled"] == ["binding"]  # torch's unit, at once


def test_a_run_makes_binding_objects_ahead_even_into_a_new_cache(tmp_path, monkeypatch):
    """The runner hands build_prepare the batch's binding objects through a file in a cache
    folder no build has made yet (a fresh cache: a verification run's first thing)."""
    from kernelmill.verify import build_prepare

    started = []
    monkeypatch.setattr(build_prepare.subprocess, "Popen", lambda argv, **kw: started.append(argv))
    build_prepare.start_background(tmp_path / "new" / "build", [], bindings=build_prepare.binding_specs(PREPARED))
    argv = started[0]
    path = argv[argv.index("--bindings") + 1]
    assert json.loads(open(path).read())[0][0] == [False, ["-O2"], []]

"""One host unit instead of a binding unit and a host unit (verify/build/unit_merge.py):
only where the merge provably keeps the meaning, and a failed merged compile
goes back to the two units."""

from __future__ import annotations

import pytest

from kernelmill.verify.build import inline_build
from kernelmill.verify.build.cuda_split import host_flags, split_cuda_unit
from kernelmill.verify.build.inline_build import assemble
from kernelmill.verify.build.unit_merge import flags_match, merge

CU = """
#include <torch/extension.h>
__global__ void twice(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.f * x[i];
}
torch::Tensor twice_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    twice<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    return y;
}
"""
DECL = "torch::Tensor twice_cuda(torch::Tensor x);"


def _units(cpp: str = DECL, cu: str = CU, functions=("twice_cuda",)):
    main, cuda = assemble("m", cpp, cu, list(functions) if functions else None)
    split = split_cuda_unit(cuda)
    assert split is not None
    return main, split.host_unit


def test_binding_then_host_with_declarations_and_the_module():
    main, host = _units()
    merged = merge(main, host)
    assert merged is not None
    assert merged.startswith(main.rstrip("\n"))  # the binding unit first, as it was alone
    assert merged.endswith(host)
    assert merged.index("PYBIND11_MODULE") < merged.index("torch::Tensor twice_cuda(torch::Tensor x) {")


def test_a_hand_written_module_in_the_cuda_source_merges_with_an_empty_binding():
    cu = CU + '\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("twice_cuda", &twice_cuda); }\n'
    main, host = _units(cpp="", cu=cu, functions=None)
    assert merge(main, host) is not None


@pytest.mark.parametrize("cpp", [
    "#define SCALE 2\n" + DECL,                                  # a macro the host would see
    "#include <vector>\n" + DECL,                                # a header the host would see
    "using namespace torch;\nTensor twice_cuda(Tensor x);",      # lookup the host would see
    "static torch::Tensor twice_cuda(torch::Tensor x);",         # linkage the host would inherit
    DECL + "\ntorch::Tensor wrap(torch::Tensor x) { return twice_cuda(x); }",  # a definition
    DECL + "\nint limit = 4;",                                  # a variable
    "template <typename T> T twice_cuda(T x);",
])
def test_binding_units_holding_more_than_declarations_stay_apart(cpp):
    main, host = _units(cpp=cpp)
    assert merge(main, host) is None


def test_a_declared_name_the_host_uses_but_does_not_define_stays_apart():
    # alone, the host unit would not compile (helper is undeclared there): merged it would
    cu = CU.replace("auto y = torch::empty_like(x);", "auto y = helper(x);")
    main, host = _units(cpp=DECL + "\ntorch::Tensor helper(torch::Tensor x);", cu=cu)
    assert merge(main, host) is None


def test_two_module_definitions_stay_apart():
    cu = CU + '\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("twice_cuda", &twice_cuda); }\n'
    main, host = _units(cu=cu)  # functions= makes a module in the binding unit too
    assert merge(main, host) is None


def test_flags_may_differ_only_in_optimisation_and_cuda_half_macros():
    base = ["-DTORCH_EXTENSION_NAME=m", "-isystem", "/inc", "-std=c++17"]
    host = host_flags(["-D__CUDA_NO_HALF_OPERATORS__", *base, "-O3", "--use_fast_math"])
    assert flags_match(base, host)
    assert not flags_match(base + ["-g"], host)
    assert not flags_match(base + ["-DFAST"], host)


# -- the builder: merged when it may be, the two units when the merged compile fails ----

FLAGS = {"cxx": "c++", "cflags": ["-DTORCH_EXTENSION_NAME=m", "-std=c++17"], "post_cflags": ["-fPIC"],
         "ldflags": ["-shared"], "nvcc": "nvcc", "cuda_cflags": ["-DTORCH_EXTENSION_NAME=m", "-std=c++17", "-O3"],
         "cuda_post_cflags": ["-arch=sm_90"]}


@pytest.fixture
def fake_tools(unit_compiler, monkeypatch):
    """conftest.py's compiler stand-in (fails on a unit holding FAIL_ME), torch's units only."""
    monkeypatch.setattr(inline_build, "_SLIM", False)  # the slim path: test_slim_units.py
    return unit_compiler


def _build(tmp_path, main, cuda):
    builder = inline_build.InlineBuilder(tmp_path)
    folder = builder.build("m", main, cuda, FLAGS)
    return builder, folder


def test_builder_compiles_kernel_and_merged_unit_only(tmp_path, fake_tools):
    main, cuda = assemble("m", DECL, CU, ["twice_cuda"])
    builder, folder = _build(tmp_path, main, cuda)
    assert (folder / "m.so").exists()
    assert sorted(c for c in fake_tools if c) == ["kernel.cu", "unit.cpp"]
    assert builder.log["merged"] is True and sorted(builder.log["compiled"]) == ["kernel", "merged"]


def test_builder_goes_back_to_the_two_units_when_the_merged_compile_fails(tmp_path, fake_tools):
    # the marker sits in the host code: the merged unit fails, so does the host unit,
    # and the error the caller sees is the host unit's, as without the merge
    main, cuda = assemble("m", DECL, CU.replace("return y;", "TORCH_CHECK(true, \"FAIL_ME\"); return y;"), ["twice_cuda"])
    builder = inline_build.InlineBuilder(tmp_path)
    with pytest.raises(inline_build.CompileError, match=r"\[host.cpp\]"):
        builder.build("m", main, cuda, FLAGS)
    assert builder.log["merged"] is False
    # the host unit's error decides the build (fail_fast.py): main.cpp beside it is killed,
    # and may not have reached its compiler by then (seen under xdist on 2 cores)
    assert "unit.cpp" in fake_tools and "host.cpp" in fake_tools
    assert set(c for c in fake_tools if c) <= {"kernel.cu", "unit.cpp", "host.cpp", "main.cpp"}


def test_merge_can_be_turned_off(tmp_path, fake_tools, monkeypatch):
    monkeypatch.setattr(inline_build, "_MERGE", False)
    main, cuda = assemble("m", DECL, CU, ["twice_cuda"])
    builder, _ = _build(tmp_path, main, cuda)
    assert sorted(c for c in fake_tools if c) == ["host.cpp", "kernel.cu", "main.cpp"]
    assert "merged" not in builder.log


@pytest.mark.gpu
def test_merged_extension_runs_like_the_reference(tmp_path, monkeypatch):
    import torch

    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "{}.{}".format(*torch.cuda.get_device_capability()))
    monkeypatch.setattr(inline_build, "_SLIM", False)  # torch's units, merged (slim: test_slim_units.py)
    builder = inline_build.install(tmp_path / "cache")
    try:
        import torch.utils.cpp_extension as ce

        ext = ce.load_inline(name="km_merge_test", cpp_sources=DECL, cuda_sources=CU, functions=["twice_cuda"])
        assert builder.log.get("merged") is True
        x = torch.randn(10_000, device="cuda")
        assert torch.equal(ext.twice_cuda(x), 2 * x)
    finally:
        import torch.utils.cpp_extension as ce

        ce.load_inline = inline_build._ORIGINAL


@pytest.mark.gpu
def test_a_kernel_error_with_the_real_compilers_is_a_compile_error_without_a_second_build(tmp_path, monkeypatch):
    # nvcc rejects the kernel unit; the merged host unit compiles: the build fails once,
    # naming the kernel unit, and the binding and host units are not compiled apart
    import torch

    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "{}.{}".format(*torch.cuda.get_device_capability()))
    bad = CU.replace("if (i < n)", "if (i < n_undeclared)")
    monkeypatch.setattr(inline_build, "_SLIM", False)
    builder = inline_build.install(tmp_path / "cache")
    import torch.utils.cpp_extension as ce

    try:
        with pytest.raises(RuntimeError, match=r"\[kernel.cu\]") as err:
            ce.load_inline(name="km_merge_bad", cpp_sources=DECL, cuda_sources=bad, functions=["twice_cuda"])
        assert "n_undeclared" in str(err.value)
        # one build: the merged host unit compiled, the binding and host were not compiled apart
        assert "merged" not in builder.log and builder.log["compiles"] == 1, builder.log
        assert "fallback" not in builder.log  # torch's own load_inline was not tried either
    finally:
        ce.load_inline = inline_build._ORIGINAL


def test_a_cached_binding_unit_is_not_compiled_again_inside_a_merge(tmp_path, fake_tools):
    # a second candidate of the same task with the same declarations and extension name
    main, cuda = assemble("m", DECL, CU, ["twice_cuda"])
    builder = inline_build.InlineBuilder(tmp_path)
    builder.build("m", main, cuda, {**FLAGS, "ldflags": ["-shared", "-lfirst"]})  # merged: binding not cached
    inline_build.InlineBuilder(tmp_path).compile_unit(
        "binding", "main.cpp", main, ["c++"], FLAGS["cflags"], FLAGS["post_cflags"])  # now it is
    fake_tools.clear()
    again = inline_build.InlineBuilder(tmp_path)
    _, cuda2 = assemble("m", DECL, CU.replace("2.f", "3.f"), ["twice_cuda"])
    again.build("m", main, cuda2, FLAGS)
    assert sorted(c for c in fake_tools if c) == ["host.cpp", "kernel.cu"]
    assert "merged" not in again.log


def test_a_host_use_before_the_definition_stays_apart():
    # alone the host unit does not compile (twice_cuda is used before it is declared);
    # merged, the binding unit's declaration in front would make it compile
    cu = CU.replace("torch::Tensor twice_cuda(torch::Tensor x) {",
                    "torch::Tensor first(torch::Tensor x) { return twice_cuda(x); }\n"
                    "torch::Tensor twice_cuda(torch::Tensor x) {")
    main, host = _units(cu=cu)
    assert merge(main, host) is None


def test_a_kernel_that_fails_does_not_send_the_build_back_to_the_two_units(tmp_path, fake_tools):
    # the merged unit compiled; compiling binding and host apart would only repeat the
    # kernel unit's error (cached) after two more torch-header compiles
    bad = CU.replace("if (i < n)", 'const char* marker = "FAIL_ME"; if (i < n)')
    main, cuda = assemble("m", DECL, bad, ["twice_cuda"])
    builder = inline_build.InlineBuilder(tmp_path)
    with pytest.raises(inline_build.CompileError, match=r"\[kernel.cu\]"):
        builder.build("m", main, cuda, FLAGS)
    # the kernel unit's error decides the build (fail_fast.py): the merged unit beside it is
    # killed, and may not have reached its compiler by then; no other unit ever starts
    got = sorted(c for c in fake_tools if c)
    assert "kernel.cu" in got and set(got) <= {"kernel.cu", "unit.cpp"}, got
    assert "merged" not in builder.log

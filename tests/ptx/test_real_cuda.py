"""`ptx pairs` on the CUDA people really write (issue 16): every unit either gives
pairs or a failed record with its reason; nothing stops the run, nothing is lost silently."""

import shutil

import pytest

pytest.importorskip("tree_sitter_cuda")

from kernelmill.cudasrc.device import device_unit  # noqa: E402
from kernelmill.ptx import PairConfig, build_pairs  # noqa: E402
from kernelmill.ptx.nvcc import bare_name, demangle  # noqa: E402
from kernelmill.records import Pair, read_jsonl  # noqa: E402

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")

# a torch extension in the style of LLM-written KernelBench candidates
EXTENSION = r"""
#include <torch/extension.h>
#include "scale.cuh"
#define CHECK_CUDA(x) TORCH_CHECK(x.is_cuda(), #x " must be a CUDA tensor")
#define KERNEL __global__ __launch_bounds__(256)
struct __align__(8) Pair2 { float v; int idx; };
#define DEF_FILL(T) __global__ void fill_##T(T* p, T v) { p[threadIdx.x] = v; }
DEF_FILL(float)
namespace {
__global__ void anon_max(const float* x, float* y, uintptr_t base) {
    float m = -FLT_MAX;
    for (int i = 0; i < 8; ++i) m = fmaxf(m, x[base + i]);
    half h = __float2half(m);
    y[threadIdx.x] = __half2float(h) * SCALE;
}
}
KERNEL void argmax_pairs(const float* x, Pair2* out) {
    Pair2 p{x[threadIdx.x], (int)threadIdx.x};
    out[blockIdx.x] = p;
}
template <typename T, int UNROLL>
__global__ void scale_t(T* x, T s) {
    #pragma unroll
    for (int k = 0; k < UNROLL; ++k) x[threadIdx.x + k * 256] *= s;
}
template <typename scalar_t>
__global__ void add_t(const scalar_t* __restrict__ a, const scalar_t* __restrict__ b, scalar_t* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
template <typename T>
__global__ void never_launched(T* x) { x[0] = T(1); }
__global__ void half_kernel(at::Half* x) { x[0] = x[1]; }
torch::Tensor forward(torch::Tensor a, torch::Tensor b) {
    CHECK_CUDA(a);
    auto c = torch::empty_like(a);
    int n = a.numel();
    scale_t<float, 4><<<1, 256>>>(c.data_ptr<float>(), 2.f);
    AT_DISPATCH_FLOATING_TYPES(a.scalar_type(), "add", ([&] {
        add_t<<<(n + 255) / 256, 256>>>(a.data_ptr<scalar_t>(), b.data_ptr<scalar_t>(),
                                        c.data_ptr<scalar_t>(), n);
    }));
    return c;
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &forward); }
"""

NOT_A_LITERAL = '''
from pathlib import Path
from torch.utils.cpp_extension import load_inline
mod = load_inline(name="x", cpp_sources="", cuda_sources=Path("k.cu").read_text(), functions=["f"])
'''


def test_names_in_anonymous_namespaces_and_templates():
    # the old reader split at the first '(' and took the last word: IndexError here
    assert bare_name("void (anonymous namespace)::warp_max<float, 4>(float const*, float*)") == "warp_max"
    assert bare_name("(anonymous namespace)::anon_max(float const*, float*)") == "anon_max"
    assert bare_name("a::(anonymous namespace)::k(int)") == "k"
    assert bare_name("relu_kernel(float const*, float*, int)") == "relu_kernel"
    assert demangle(["_ZN12_GLOBAL__N_18anon_maxEPKfPf"])["_ZN12_GLOBAL__N_18anon_maxEPKfPf"] == "anon_max"


def test_device_unit_keeps_device_code_and_reports_what_it_drops():
    unit = device_unit(EXTENSION)
    src = unit.source
    for kept in ("struct __align__(8) Pair2", "DEF_FILL(float)", "#define KERNEL", "KERNEL void argmax_pairs",
                 '#include "scale.cuh"', "#include <cfloat>", "#include <cuda_fp16.h>", "#include <cstdint>"):
        assert kept in src, kept
    for gone in ("torch/extension.h", "CHECK_CUDA", "PYBIND11_MODULE", "torch::Tensor forward", "at::Half"):
        assert gone not in src, gone
    assert unit.instances == ["scale_t<float, 4>", "add_t<float>", "add_t<double>"]
    assert set(unit.dropped) == {"half_kernel"} and "at::" in unit.dropped["half_kernel"]
    assert set(unit.unresolved) == {"never_launched"}
    assert unit.flags == ("--expt-relaxed-constexpr",)


@needs_nvcc
def test_pairs_on_a_real_extension_report_every_kernel(tmp_path):
    (tmp_path / "ext.cu").write_text(EXTENSION)
    (tmp_path / "scale.cuh").write_text("#pragma once\n#define SCALE 0.5f\n")  # found on the source's path
    (tmp_path / "not_literal.py").write_text(NOT_A_LITERAL)
    (tmp_path / "plain.cu").write_text("__global__ void ok_kernel(float* y) { y[threadIdx.x] = 1.f; }\n")
    out = tmp_path / "pairs.jsonl"
    s = build_pairs([tmp_path / "not_literal.py", tmp_path / "ext.cu", tmp_path / "plain.cu"], out, PairConfig())
    pairs = read_jsonl(out, Pair)
    ok = {(p.kernel_name, p.meta.get("signature")) for p in pairs if p.meta["status"] == "ok"}
    names = sorted(k for k, _ in ok)
    assert names == ["add_t", "add_t", "anon_max", "argmax_pairs", "fill_float", "ok_kernel", "scale_t"]
    assert ("add_t", "void add_t<double>(double const*, double const*, double*, int)") in ok
    failed = {p.kernel_name or p.origin: p.meta["error"] for p in pairs if p.meta["status"] == "failed"}
    assert "not a string literal" in failed[str(tmp_path / "not_literal.py")]
    assert "never_launched" in failed and "not instantiated" in failed["never_launched"]
    assert "half_kernel" in failed and "torch headers" in failed["half_kernel"]
    assert (s.pairs, s.failed) == (7, 3)
    anon = next(p for p in pairs if p.kernel_name == "anon_max")
    assert "FLT_MAX" in anon.source and "__global__ void anon_max" in anon.source
    assert next(p for p in pairs if p.kernel_name == "add_t").launch["grid"] == "(n + 255) / 256"


@needs_nvcc
def test_instances_that_do_not_compile_are_reported_not_fatal(tmp_path):
    src = ("template <typename T> __global__ void k(T* x) { x[threadIdx.x] *= T(4); }\n"
           "__global__ void other(float* x) { x[0] = 1.f; }\n"
           "torch::Tensor launch(torch::Tensor x) {\n"
           "  using LOCAL = float; k<LOCAL><<<1, 32>>>(x.data_ptr<float>()); return x; }\n")
    (tmp_path / "a.cu").write_text(src)
    out = tmp_path / "p.jsonl"
    s = build_pairs([tmp_path / "a.cu"], out, PairConfig())
    pairs = read_jsonl(out, Pair)
    # the alias `LOCAL` only exists in the host function: the instance fails, the rest of the unit
    # does not (a host-local constant is instantiated with its value: test_refactor.py)
    assert [p.kernel_name for p in pairs if p.meta["status"] == "ok"] == ["other"]
    (bad,) = [p for p in pairs if p.meta["status"] == "failed"]
    assert bad.kernel_name == "k" and "k<LOCAL>" in bad.meta["error"] and s.failed == 1


def test_an_internal_error_in_one_unit_does_not_stop_the_run(tmp_path, monkeypatch):
    import kernelmill.cudasrc.device as device

    real = device.device_unit

    def flaky(src, instantiate=True):
        if "boom" in src:
            raise IndexError("list index out of range")
        return real(src, instantiate)

    monkeypatch.setattr(device, "device_unit", flaky)
    monkeypatch.setattr("kernelmill.ptx.pairs.nvcc_ptx", lambda src, opts: (
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry fine()\n{\n\tret;\n}\n"))
    (tmp_path / "a.cu").write_text("__global__ void boom(float* x) {}\n")
    (tmp_path / "b.cu").write_text("__global__ void fine() {}\n")
    out = tmp_path / "p.jsonl"
    s = build_pairs([tmp_path / "a.cu", tmp_path / "b.cu"], out, PairConfig())
    pairs = read_jsonl(out, Pair)
    assert (s.units, s.pairs, s.failed) == (2, 1, 1)
    assert "internal error (IndexError)" in next(p.meta["error"] for p in pairs if p.meta["status"] == "failed")
    assert next(p for p in pairs if p.meta["status"] == "ok").kernel_name == "fine"

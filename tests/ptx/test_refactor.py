"""CUDA refactoring on tree-sitter: parentheses, index CSE, and the PTX check."""

import shutil

import pytest

pytest.importorskip("tree_sitter_cuda")

from kernelmill.cudasrc import (extract_index_cse, normalize_ptx, refactor_cuda,  # noqa: E402
                                remove_redundant_parens, same_ptx)
from kernelmill.ptx import NvccOptions  # noqa: E402


def test_parens_use_precedence_and_associativity():
    src = ("__global__ void f(float* a, float* b, int n) { int i = ((blockIdx.x*(256))+threadIdx.x);"
           " float z = a[i]+(b[i]+a[0]); float w = (a[i]-b[i])-z; float v = a[i]-(b[i]-z);"
           " float y = a[i]-(-b[i]); float q = (z*w)/(*a); if ((i<n)) b[(i)] = ((i>2)?(z):(w)) + (v*y); }")
    out, n = remove_redundant_parens(src)
    assert "int i = blockIdx.x*256+threadIdx.x;" in out
    assert "a[i]+(b[i]+a[0])" in out          # not re-associated (floats)
    assert "a[i]-b[i]-z" in out and "a[i]-(b[i]-z)" in out
    assert "a[i]- -b[i]" in out                # no `--` token created
    assert "z*w/ *a" in out                    # no `/*` comment created
    assert "b[i] = (i>2?z:w) + v*y" in out
    assert n >= 9


def test_cse_keeps_offsets_and_defines_before_use():
    src = ("__global__ void k(float* A, float* C) {\n"
           "  C[((((int)blockIdx.x) * 64) + ((int)threadIdx.x))] = A[((((int)blockIdx.x) * 64) + ((int)threadIdx.x))];\n"
           "  C[(((((int)blockIdx.x) * 64) + ((int)threadIdx.x)) + 32)] = A[(((((int)blockIdx.x) * 64) + ((int)threadIdx.x)) + 32)];\n"
           "}\n")
    out, n = extract_index_cse(src)
    assert n == 1
    decl = out.index("const auto idx0 = ")
    assert decl < out.index("C[(idx0)]") and "A[((idx0) + 32)]" in out


def test_cse_skips_expressions_whose_names_change():
    src = ("__global__ void k(float* A) { int j = threadIdx.x;\n"
           "  A[j * 4 + 1] = 0.f; j += 1; A[j * 4 + 1] = 1.f; }\n")
    out, n = extract_index_cse(src)
    assert n == 0 and out == src


def test_normalize_ptx_ignores_register_numbering():
    a = ".entry k()\n{\n.reg .b32 %r<9>;\nadd.s32 %r7, %r3, 1;\nmov.u32 %r3, %r7;\n}\n"
    b = ".entry k()\n{\n.reg .b32 %r<3>;\nadd.s32 %r2, %r1, 1;\nmov.u32 %r1, %r2;\n}\n"
    c = ".entry k()\n{\n.reg .b32 %r<3>;\nadd.s32 %r2, %r1, 1;\nmov.u32 %r2, %r2;\n}\n"
    assert normalize_ptx(a) == normalize_ptx(b) != normalize_ptx(c)


needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")


@needs_nvcc
def test_check_rejects_reassociation_and_keeps_the_original():
    a = "__global__ void k(float* x) { x[0] = x[1] + (x[2] + x[3]); }\n"
    b = "__global__ void k(float* x) { x[0] = x[1] + x[2] + x[3]; }\n"
    ok, why = same_ptx(a, b, NvccOptions())
    assert not ok and "PTX differs" in why
    res = refactor_cuda(a)
    assert res.source == a and all(s.changes == 0 for s in res.steps)


@needs_nvcc
def test_refactor_keeps_checked_parens_on_compiler_style_code():
    src = ("extern \"C\" __global__ void k(float* __restrict__ A, float* __restrict__ C) {\n"
           "  C[((((int)blockIdx.x) * 128) + (((int)threadIdx.x) * 2))] = (A[((((int)blockIdx.x) * 128) + "
           "(((int)threadIdx.x) * 2))] * 2.000000e+00f);\n}\n")
    res = refactor_cuda(src, cse=False, vcse=False)
    (step,) = res.steps
    assert step.kept and step.changes > 5 and len(res.source) < len(src)
    assert "C[(int)blockIdx.x * 128 + (int)threadIdx.x * 2]" in res.source


def test_a_file_whose_added_instances_do_not_compile_is_checked_without_them():
    # issue 44: a template argument local to the host function (here a type alias) makes the
    # added instance `scaled<Elem>` fail, and the whole file was given up ("original cannot be checked")
    from kernelmill.cudasrc import refactor_cuda

    src = r"""
template <typename T> __global__ void scaled(T* x) { x[threadIdx.x] = x[threadIdx.x] * T(4); }
__global__ void twice(float* x) { int i = (threadIdx.x); x[(i)] = ((x[(i)]) * 2.0f); }
void launch(float* x) {
    using Elem = float;
    scaled<Elem><<<1, 32>>>(x);
    twice<<<1, 32>>>(x);
}
"""
    res = refactor_cuda(src, cse=False, vcse=False)
    (step,) = res.steps
    assert step.checked and step.kept and step.changes > 0, step
    assert "((x[(i)])" not in res.source



@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_a_host_local_constant_template_argument_is_instantiated_with_its_value():
    from kernelmill.cudasrc import device_unit
    from kernelmill.ptx import nvcc_ptx

    src = r"""
template <int N> __global__ void scaled(float* x) { x[threadIdx.x] = x[threadIdx.x] * N; }
void launch(float* x) {
    constexpr int n = 4;
    const int m = n * 2;
    scaled<n><<<1, 32>>>(x);
    scaled<m><<<1, 32>>>(x);
}
"""
    unit = device_unit(src)
    assert unit.instances == ["scaled<(4)>", "scaled<((4) * 2)>"]
    assert nvcc_ptx(unit.source, NvccOptions("sm_90")).count(".entry") == 2


def test_a_step_rejected_for_one_kernel_is_kept_in_the_others(monkeypatch):
    # the reordering check names the function whose PTX differs: the step is retried
    # without changing it (issue 44: multi-kernel TVM files lost a whole step for one kernel)
    from kernelmill.cudasrc import check

    src = ('extern "C" __global__ void k1(float* x) { x[((threadIdx.x))] = 1.f; }\n'
           'extern "C" __global__ void k2(float* x) { x[((threadIdx.x))] = 2.f; }\n')
    monkeypatch.setattr(check, "compile_original", lambda s, o: ("ptx", ["k1", "k2"], True))

    def same_as(ptx, new, opts, inst, reorder):
        if "k1(float* x) { x[threadIdx.x]" in new:
            return False, "PTX differs at token 9; function k1: segment 0 (...)", False
        return True, "", False

    monkeypatch.setattr(check, "_same_as", same_as)
    res = check.refactor_cuda(src, cse=False, vcse=False)
    (step,) = res.steps
    assert step.kept and step.left == ("k1",) and "function k1" in step.reason
    assert "k1(float* x) { x[((threadIdx.x))]" in res.source and "k2(float* x) { x[threadIdx.x]" in res.source
    monkeypatch.setattr(check, "_same_as", lambda *a: (False, "PTX differs at token 9; function k1: x", False))
    res = check.refactor_cuda(src, cse=False, vcse=False)
    assert not res.steps[0].kept and res.source == src  # k2 unchanged too: its own failure names k1 again

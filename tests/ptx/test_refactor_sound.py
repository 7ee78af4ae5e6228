"""`cuda refactor`'s PTX check is sound (issue 16): it only keeps what it compared,
compares real PTX, and sees through nvcc's per-compile symbol hashes."""

import shutil
import subprocess

import pytest

pytest.importorskip("tree_sitter_cuda")

from typer.testing import CliRunner  # noqa: E402

from kernelmill.cli import app  # noqa: E402
from kernelmill.cudasrc import extract_index_cse, refactor_cuda, remove_redundant_parens, same_ptx  # noqa: E402
from kernelmill.cudasrc.check import normalize_ptx, normalize_symbol  # noqa: E402
from kernelmill.ptx import NvccOptions  # noqa: E402

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")

LAUNCH_IN_MACRO = r"""
#include <cstdio>
#define checkKernelErrors(expr) do { expr; cudaError_t e = cudaGetLastError(); \
    if (e != cudaSuccess) printf("%s\n", cudaGetErrorString(e)); } while (0)
__global__ void k(float* x, int n) { int i = ((blockIdx.x * 256) + threadIdx.x); if (i < n) x[(i)] = (x[i] * 2.f); }
void launch(float* x, int n) { checkKernelErrors((k<<<(n + 255) / 256, 256>>>(x, n))); }
"""


def test_parens_around_a_launch_or_template_call_in_a_call_stay():
    # in a macro argument the comma of <<<g, b>>> or <a, b> splits the argument list
    out, _ = remove_redundant_parens("void f(float* x) { checkKernelErrors((k<<<g, b>>>(x))); "
                                     "CHECK((g<float, 4>(x))); y = h((a + b)); }")
    assert "checkKernelErrors((k<<<g, b>>>(x)))" in out and "CHECK((g<float, 4>(x)))" in out
    assert "h(a + b)" in out


@needs_nvcc
def test_host_code_is_not_changed_and_the_output_compiles(tmp_path):
    res = refactor_cuda(LAUNCH_IN_MACRO)
    assert "checkKernelErrors((k<<<(n + 255) / 256, 256>>>(x, n)))" in res.source  # host: not checked, not changed
    assert "int i = blockIdx.x * 256 + threadIdx.x;" in res.source and "x[i] = x[i] * 2.f" in res.source
    f = tmp_path / "out.cu"
    f.write_text(res.source)
    r = subprocess.run(["nvcc", "-ptx", "-arch=sm_90", str(f), "-o", str(tmp_path / "out.ptx")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


@needs_nvcc
def test_template_only_file_checks_nothing_and_keeps_nothing():
    src = "template <typename T> __global__ void t(T* x) { x[((threadIdx.x * 2))] = ((T)1); }\n"
    res = refactor_cuda(src)
    assert res.source == src
    (parens,) = [s for s in res.steps if s.step == "parens"]
    assert not parens.kept and "no function" in parens.reason
    ok, why = same_ptx(src, src.replace("((threadIdx.x * 2))", "threadIdx.x*2"), NvccOptions())
    assert not ok and "no function" in why


@needs_nvcc
def test_template_instantiated_at_a_launch_is_checked():
    src = ("template <typename T> __global__ void t(T* x) { x[((threadIdx.x * 2))] = ((T)1); }\n"
           "void go(float* x) { t<float><<<1, 32>>>(x); }\n")
    res = refactor_cuda(src, cse=False, vcse=False)
    assert res.steps[0].kept and "x[threadIdx.x * 2] = (T)1" in res.source


def test_cse_does_not_read_across_a_write_or_a_barrier():
    write = ("__global__ void k(int* B, float* A) {\n  A[B[0] * 4 + threadIdx.x] = 1.f;\n  B[0] = 7;\n"
             "  A[B[0] * 4 + threadIdx.x + 1] = 2.f;\n}\n")
    barrier = write.replace("B[0] = 7;", "__syncthreads();")
    for src in (write, barrier):
        out, n = extract_index_cse(src)
        assert n == 0 and out == src
    # within one statement every read comes before the store: shared
    one = "__global__ void k(int* B, float* A) {\n  A[B[0] * 4 + threadIdx.x] = A[B[0] * 4 + threadIdx.x + 1];\n}\n"
    out, n = extract_index_cse(one)
    assert n == 1 and "A[idx0] = A[idx0 + 1]" in out
    # a variable whose address is taken may be written through it
    addr = ("__global__ void k(float* A) { int j = threadIdx.x; A[j * 4 + 1] = 0.f; f(&j);"
            " A[j * 4 + 2] = 1.f; }\n")
    assert extract_index_cse(addr)[1] == 0


def test_symbol_hashes_are_blanked():
    a = "_ZN46_GLOBAL__N__1ff02243_8_inst2_cu_1c21033f_267372anIdEEvPT_"
    b = "_ZN46_GLOBAL__N__1ff02243_8_inst2_cu_1c21033f_268442anIdEEvPT_"
    c = "_ZN46_GLOBAL__N__1ff02243_8_inst2_cu_1c21033f_268442bnIdEEvPT_"
    assert normalize_symbol(a) == normalize_symbol(b) != normalize_symbol(c)
    ptx = ".visible .entry {}()\n{{\n\tret;\n}}\n"
    assert normalize_ptx(ptx.format(a)) == normalize_ptx(ptx.format(b))


@needs_nvcc
def test_a_file_equals_itself_with_an_anonymous_namespace():
    src = "namespace {\n__global__ void k(float* x) { x[threadIdx.x] = 1.f; }\n}\n"
    assert same_ptx(src, src, NvccOptions()) == (True, "")


@needs_nvcc
def test_include_path_of_the_source(tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "consts.cuh").write_text("#define SCALE 2.f\n")
    src = '#include "consts.cuh"\n__global__ void k(float* x) { x[((threadIdx.x))] = (x[threadIdx.x] * SCALE); }\n'
    (tmp_path / "inc" / "k.cu").write_text(src)
    assert not refactor_cuda(src, cse=False, vcse=False).steps[0].kept  # no include path: cannot be checked
    res = refactor_cuda(src, NvccOptions(include=(str(tmp_path / "inc"),)), cse=False, vcse=False)
    assert res.steps[0].kept and "x[threadIdx.x] = x[threadIdx.x] * SCALE" in res.source
    out = tmp_path / "o.cu"  # the CLI searches the source's own directory
    r = CliRunner().invoke(app, ["cuda", "refactor", str(tmp_path / "inc" / "k.cu"), "-o", str(out), "--no-cse"])
    assert r.exit_code == 0 and "PTX identical: kept" in r.output and out.read_text() == res.source
    r = CliRunner().invoke(app, ["cuda", "refactor", str(tmp_path / "inc" / "k.cu"), "-o", str(out), "--no-check"])
    assert r.exit_code == 0 and "not checked" in r.output and "PTX identical" not in r.output


def test_a_template_overload_without_an_instance_is_not_edited():
    from kernelmill.cudasrc.check import checked_ranges
    src = ("__global__ void k(float* x) { x[0] = 1.f; }\n"
           "template <typename T> __global__ void k(T* x) { x[((0))] = T(2); }\n")
    first = (0, src.index("\n"))
    assert checked_ranges(src, ["_Z1kPf"]) == [first]  # the plain k only: same name, no instance
    assert len(checked_ranges(src, ["_Z1kPf", "_Z1kIiEvPT_"])) == 2

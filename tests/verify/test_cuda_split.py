"""The kernel/host split of a CUDA unit: applied only when it keeps the meaning."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from kernelmill.tasks.builtin import builtin_samples
from kernelmill.verify.build.cuda_split import NVCC_HOST_PRELUDE, host_flags, split_cuda_unit
from kernelmill.verify.build.inline_build import assemble

KERNEL = """
#include <torch/extension.h>
#define TILE 16
struct Pair { float a, b; };
__global__ void scale(const float* __restrict__ x, float* y, int n, Pair p) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * p.a + p.b;   // "scale<<<" in a comment
}
torch::Tensor run(torch::Tensor x) {
    auto y = torch::empty_like(x);
    scale<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel(), Pair{2.f, 1.f});
    TORCH_CHECK(cudaGetLastError() == cudaSuccess, "scale failed");
    return y;
}
"""


def _unit(src: str) -> str:
    return assemble("m", "", src)[1]


def test_split_moves_kernels_and_rewrites_launches():
    sp = split_cuda_unit(_unit(KERNEL))
    assert sp is not None and sp.kernels == ["scale"]
    assert "torch" not in sp.kernel_unit and "__global__ void scale" in sp.kernel_unit
    assert "scale<<<__km_g, __km_b, __km_s, __km_st>>>(x, y, n, p)" in sp.kernel_unit
    # the launch keeps its arguments, default shared memory and stream become 0
    assert "__km_launch_scale((x.numel() + 255) / 256, 256, 0, 0, x.data_ptr<float>()" in sp.host_unit
    assert "__global__" not in sp.host_unit and "<<<" not in sp.host_unit
    # types and macros are in both units; torch includes only on the host side
    for unit in (sp.kernel_unit, sp.host_unit):
        assert "struct Pair" in unit and "#define TILE 16" in unit
    assert "#include <torch/extension.h>" in sp.host_unit


@pytest.mark.parametrize("change", [
    ("__global__ void scale(", "template <typename T> __global__ void scale("),  # template kernel
    ("#define TILE 16", "#ifdef TILE\n#endif"),  # conditional compilation
    ("auto y = torch::empty_like(x);", "auto y = torch::empty_like(x); cudaFuncSetAttribute(scale, cudaFuncAttributeMaxDynamicSharedMemorySize, 0);"),
    ("int n, Pair p)", "int n, at::Half p)"),  # torch type in a kernel
    ("int n, Pair p)", "int n, Pair)"),  # unnamed parameter
])
def test_split_refuses_what_it_cannot_prove(change):
    assert split_cuda_unit(_unit(KERNEL.replace(*change))) is None


def test_split_refuses_host_use_of_device_symbols():
    src = KERNEL.replace("#define TILE 16", "__constant__ float coef[4];") \
        .replace("auto y = torch::empty_like(x);", "auto y = torch::empty_like(x); cudaMemcpyToSymbol(coef, nullptr, 0);")
    assert split_cuda_unit(_unit(src)) is None


def test_every_builtin_cuda_candidate_splits():
    n = 0
    for s in builtin_samples():
        if s.language != "cuda":
            continue
        consts = {n.targets[0].id: n.value.value for n in ast.parse(s.code).body
                  if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)}
        src = consts.get("cuda_source") or consts.get("cuda_src")
        if src is None:
            continue
        n += 1
        assert split_cuda_unit(_unit(src)) is not None, s.sample_id
    assert n >= 10


def test_host_flags_keep_macros_includes_and_std():
    flags = ["-DA=1", "-isystem", "/inc", "-D__CUDA_NO_HALF_OPERATORS__", "--expt-relaxed-constexpr",
             "-gencode=arch=compute_90,code=sm_90", "--compiler-options", "'-fPIC'", "-std=c++17", "-O3"]
    assert host_flags(flags) == ["-DA=1", "-isystem", "/inc", "-D__CUDA_NO_HALF_OPERATORS__", "-fPIC",
                                 "-std=c++17", "-O3"]


LOADED_FILE = r"""
#include <torch/extension.h>
__global__ void twice(const float* x, float* y, long n) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.f * x[i];
}
torch::Tensor run(torch::Tensor x) {
    auto y = torch::empty_like(x);
    twice<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    return y;
}
"""


def test_the_host_unit_of_a_file_without_implicit_headers_compiles(tmp_path):
    # a .cu given to torch's `load` includes no cuda_runtime.h: nvcc adds it to every unit, the
    # host compiler does not, and the launch declarations name dim3 and cudaStream_t (the first
    # device run of tests/verify/test_load_gpu.py failed here: "host.cpp:2:6: error: variable or
    # field '__km_launch_twice_from_load' declared void")
    import shutil
    import subprocess

    from torch.utils import cpp_extension as ce

    cuda_home = ce.CUDA_HOME or "/usr/local/cuda"
    if shutil.which("g++") is None or not (Path(cuda_home) / "include" / "cuda_runtime.h").exists():
        pytest.skip("needs g++ and the CUDA toolkit's headers")
    sp = split_cuda_unit(LOADED_FILE)
    assert sp is not None and sp.host_unit.startswith(NVCC_HOST_PRELUDE + "\n#line 1\n")
    src = tmp_path / "host.cpp"
    src.write_text(sp.host_unit)
    import sysconfig

    includes = [f"-I{p}" for p in ce.include_paths()] + [f"-I{cuda_home}/include", f"-I{sysconfig.get_paths()['include']}"]
    res = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", *includes, str(src)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr[-2000:]


def _toolkit() -> str | None:
    import shutil

    from torch.utils import cpp_extension as ce

    home = ce.CUDA_HOME or "/usr/local/cuda"
    ok = shutil.which("g++") is not None and (Path(home) / "include" / "cuda_runtime.h").exists()
    return home if ok else None


MIN_MAX_HOST = """
#include <torch/extension.h>
__global__ void add_one(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] + 1.0f;
}
torch::Tensor run(torch::Tensor x) {
    auto y = torch::empty_like(x);
    const int n = x.numel();
    const int blocks = min(65535, (n + 255) / 256);
    add_one<<<max(blocks, 1), 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""


def test_host_code_that_calls_cudas_min_and_max_compiles_in_the_host_unit(tmp_path):
    """nvcc gives a .cu file's host code CUDA's `min`/`max` overloads; the host compiler does
    not (cuda-l1 L2-90's host unit: "'min' was not declared in this scope", a build that
    torch's own units make). The host unit starts with what nvcc's host pass has."""
    import subprocess
    import sysconfig

    from torch.utils import cpp_extension as ce

    home = _toolkit()
    if home is None:
        pytest.skip("needs g++ and the CUDA toolkit's headers")
    sp = split_cuda_unit(MIN_MAX_HOST)
    assert sp is not None and "__km_launch_add_one(max(blocks, 1), 256" in sp.host_unit
    src = tmp_path / "host.cpp"
    src.write_text(sp.host_unit)
    includes = [f"-I{p}" for p in ce.include_paths()] + [f"-I{home}/include", f"-I{sysconfig.get_paths()['include']}"]
    res = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", *includes, str(src)], capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stderr[-2000:]


def test_the_preludes_min_and_max_give_what_nvccs_give(tmp_path):
    """The same host program built by nvcc (CUDA's own overloads) and by g++ with the
    prelude: mixed signs, widths and floating types, NaN; the printed results must agree."""
    import shutil
    import subprocess

    home = _toolkit()
    nvcc = shutil.which("nvcc") or (home and str(Path(home) / "bin" / "nvcc"))
    if home is None or not nvcc or not Path(nvcc).exists():
        pytest.skip("needs nvcc and g++")
    body = """
#include <cstdio>
int main() {
  printf("%d %d %u %u %u\\n", min(65535, 7), max(-3, 2), min(-1, 2u), max(-1, 2u), min(3u, -4));
  printf("%ld %lu %lu %lld %llu\\n", min(-5L, 3L), min(-5L, 3UL), max(7UL, -2L), max(-9LL, 4LL), min(-1LL, 5ULL));
  printf("%.3f %.3f %.3f %.3f\\n", (double)min(1.5f, -2.5f), max(1.5, 2.25), min(1.5f, 0.75), max(2.5, 1.25f));
  printf("%.3f %.3f\\n", (double)min(__builtin_nanf(""), 1.0f), max(2.0, __builtin_nan("")));
  return 0;
}
"""
    (tmp_path / "body.inc").write_text(body)
    (tmp_path / "a.cu").write_text('#include "body.inc"\n')
    (tmp_path / "b.cpp").write_text(NVCC_HOST_PRELUDE + '\n#include "body.inc"\n')
    built = [subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, check=False) for cmd in (
        [nvcc, "-o", "a", "a.cu"], ["g++", "-std=c++17", f"-I{home}/include", "-o", "b", "b.cpp"])]
    assert all(r.returncode == 0 for r in built), [r.stderr[-1500:] for r in built]
    out = [subprocess.run([str(tmp_path / exe)], capture_output=True, text=True, check=False).stdout for exe in ("a", "b")]
    assert out[0] == out[1] and out[0].count("\n") == 4, out

"""Pair builder end to end with nvcc (and Triton): names, launch, Rolled-PTX, resume, failures."""

import shutil

import pytest

from kernelmill.ptx import PairConfig, build_pairs, expand_text, fmt_module, parse_module
from kernelmill.records import Pair, read_jsonl

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")

CU = r"""
#define N_UNROLL 8
__device__ __forceinline__ float twice(float v) { return 2.f * v; }
__global__ void tile_sum(const float* __restrict__ x, float* __restrict__ y) {
    float acc = 0.f;
    #pragma unroll
    for (int k = 0; k < N_UNROLL; ++k) acc += twice(x[blockIdx.x * 2048 + k * 256 + threadIdx.x]);
    y[blockIdx.x * 256 + threadIdx.x] = acc;
}
__global__ void scale(float* y, float s, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] *= s;
}
void launch(const float* x, float* y, int blocks) {
    tile_sum<<<blocks, 256>>>(x, y);
}
"""

CANDIDATE = '''
import torch
from torch.utils.cpp_extension import load_inline
source = """
#include <torch/extension.h>
__global__ void relu_kernel(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}
torch::Tensor relu(torch::Tensor x) {
    auto y = torch::empty_like(x);
    int n = x.numel();
    relu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
"""
mod = load_inline(name="relu", cpp_sources="torch::Tensor relu(torch::Tensor x);",
                  cuda_sources=source, functions=["relu"])
'''


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    d = tmp_path_factory.mktemp("pairs")
    (d / "k.cu").write_text(CU)
    (d / "cand.py").write_text(CANDIDATE)
    (d / "broken.cu").write_text("__global__ void broken(float* y) { y[0] = undefined_name; }\n")
    out = d / "pairs.jsonl"
    cfg = PairConfig(unroll=(True, False))
    summary = build_pairs([d / "k.cu", d / "cand.py", d / "broken.cu"], out, cfg)
    return d, out, cfg, summary


def test_pairs_per_kernel_with_sources_and_launch(built):
    d, out, _, summary = built
    pairs = read_jsonl(out, Pair)
    ok = [p for p in pairs if p.meta["status"] == "ok"]
    assert summary.pairs == len(ok) == 6 and summary.failed == 2  # broken.cu, both unroll modes
    by = {(p.kernel_name, "no-unroll" in p.options): p for p in ok}
    assert set(by) == {(k, u) for k in ("tile_sum", "scale", "relu_kernel") for u in (True, False)}
    ts = by[("tile_sum", False)]
    assert "twice" in ts.source and "__global__ void tile_sum" in ts.source and "scale(" not in ts.source
    assert ts.launch == {"grid": "blocks", "block": "256", "args": ["x", "y"]}
    assert by[("relu_kernel", False)].launch["grid"] == "(n + 255) / 256"
    assert ts.target == "sm_90" and "-O3" in ts.options
    # one .entry per pair, and the rolled text expands back to the PTX exactly
    for p in ok:
        assert len([f for f in parse_module(p.ptx).functions if f.kind == ".entry"]) == 1
        assert expand_text(p.rolled_ptx) == fmt_module(parse_module(p.ptx))
        assert p.meta["roundtrip_ok"]
    # the unrolled reduction is rolled, the no-unroll build has nothing to roll
    assert ts.meta["loops"] >= 1 and ts.meta["rolled_tokens"] < 0.7 * ts.meta["ptx_tokens"]


def test_failure_keeps_nvcc_stderr_and_resume_skips_done_units(built):
    d, out, cfg, _ = built
    failed = [p for p in read_jsonl(out, Pair) if p.meta["status"] == "failed"]
    assert failed and all("undefined_name" in p.meta["error"] for p in failed)
    before = out.read_text()
    again = build_pairs([d / "k.cu", d / "cand.py", d / "broken.cu"], out, cfg)
    assert again.skipped == again.units == 6 and again.pairs == 0
    assert out.read_text() == before


TRITON = '''
import triton
import triton.language as tl

@triton.jit
def row_sum(x, y, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + pid, tl.sum(tl.load(x + offs), axis=0))

TRITON_PTX_SPECS = [dict(kernel="row_sum", signature={"x": "*fp32", "y": "*fp32", "BLOCK": "constexpr"},
                         constexprs={"BLOCK": 256}, launch={"grid": ["rows"], "num_warps": 4})]
'''


def test_triton_pairs(tmp_path):
    pytest.importorskip("triton")
    (tmp_path / "tk.py").write_text(TRITON)
    out = tmp_path / "p.jsonl"
    s = build_pairs([tmp_path / "tk.py"], out, PairConfig())
    (p,) = read_jsonl(out, Pair)
    assert s.pairs == 1 and p.kernel_name == "row_sum" and p.source_language == "triton"
    assert "tl.sum" in p.source and p.launch == {"grid": ["rows"], "num_warps": 4}
    assert ".loc" not in p.ptx and expand_text(p.rolled_ptx) == fmt_module(parse_module(p.ptx))
    # Triton's warp-shuffle ladder (offsets 16, 8, 4, 2, 1) rolls with a geometric term
    assert "(16>>i)" in p.rolled_ptx

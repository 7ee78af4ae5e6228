"""Launch files beside hand-written kernels (issue 44 item 4, session 16): checked configs for
kernels with no host code, and kernel sources that compile on their own."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("tree_sitter_cuda")

from kernelmill.cudasrc.standalone import standalone_kernel_source  # noqa: E402
from kernelmill.cudasrc.tsparse import kernel_source  # noqa: E402
from kernelmill.ptx.evaluate.config import ConfigError, config_from_meta  # noqa: E402
from kernelmill.ptx.evaluate.launch_files import (LaunchSpec, read_launch_file, spec_config,  # noqa: E402
                                                  template_values)

HAND = Path(__file__).resolve().parents[2] / "benchmarks" / "ptx_external" / "hand"
NVCC = shutil.which("nvcc") is not None

KERNEL = r"""
#include <cuda_fp16.h>
template <int VEC>
__global__ void scale_vec(const float4* __restrict__ x, float4* __restrict__ y, float s, int n4) {
  int i = (blockIdx.x * blockDim.x + threadIdx.x) * VEC;
  for (int k = 0; k < VEC; ++k)
    if (i + k < n4) { float4 v = x[i + k]; y[i + k] = make_float4(v.x * s, v.y * s, v.z * s, v.w * s); }
}
template __global__ void scale_vec<2>(const float4*, float4*, float, int);
"""


def spec(**over) -> LaunchSpec:
    d = {"kernel": "scale_vec", "template_args": ["2"], "sizes": {"n4": 1000, "B": 128},
         "requires": ["n4 > 0"], "grid": ["ceil_div(n4, B * VEC)"], "block": ["B"],
         "params": [{"name": "x", "dtype": "float32", "role": "in", "elements": "4 * n4"},
                    {"name": "y", "dtype": "float32", "role": "out", "elements": "4 * n4"},
                    {"name": "s", "value": 0.5}, {"name": "n4", "value": "n4"}],
         "bounds": "every access is guarded by i + k < n4"}
    d.update(over)
    return LaunchSpec.from_dict(d, "test")


def test_a_launch_gives_the_config_its_launcher_would():
    cfg = spec_config(KERNEL, spec())
    assert cfg.grid == [4, 1, 1] and cfg.block == [128, 1, 1]  # ceil(1000 / 256), the template's VEC bound
    assert [(p.name, p.role, p.numel) for p in cfg.params] == [("x", "in", 4000), ("y", "out", 4000),
                                                               ("s", "scalar", 1), ("n4", "scalar", 1)]
    assert cfg.params[2].value == 0.5 and cfg.params[3].value == 1000 and cfg.template_args == ["2"]
    # stored as meta.config, read back by the evaluator's own reader
    back = config_from_meta({**cfg.to_dict(), "origin": "launch file x"}, "scale_vec")
    assert back.to_dict() == cfg.to_dict()


@pytest.mark.parametrize("over, why", [
    ({"bounds": ""}, "no 'bounds'"),
    ({"requires": ["n4 % 64 == 0"]}, "does not hold"),
    ({"sizes": {"n4": 1000, "B": 128, "VEC": 4}}, "instance has VEC = 2"),
    ({"block": [2048]}, "more than a block"),
    ({"params": [{"name": "y", "dtype": "float32", "elements": "4"}]}, "are not the kernel's"),
])
def test_a_launch_that_cannot_be_argued_is_refused(over, why):
    with pytest.raises(ConfigError, match=why):
        spec_config(KERNEL, spec(**over))


@pytest.mark.parametrize("param, why", [
    ({"name": "x", "dtype": "float32", "role": "in", "elements": "4 * n4 + 1"}, "multiple of 4"),
    ({"name": "x", "dtype": "int32", "role": "in", "elements": "4 * n4"}, "width and kind"),
    ({"name": "x", "dtype": "float16", "role": "in", "elements": "4 * n4"}, "width and kind"),
    ({"name": "x", "dtype": "float32", "role": "out", "elements": "4 * n4"}, "const"),
    ({"name": "x", "value": 3}, "is a pointer"),
])
def test_a_buffer_must_match_the_declared_element_type(param, why):
    params = [param, {"name": "y", "dtype": "float32", "role": "out", "elements": "4 * n4"},
              {"name": "s", "value": 0.5}, {"name": "n4", "value": "n4"}]
    with pytest.raises(ConfigError, match=why):
        spec_config(KERNEL, spec(params=params))


def test_template_values_are_the_instance_integer_parameters():
    src = "template <typename T, int BM = 128, const int BN = 64>\n__global__ void k(T* x) {}\n"
    assert template_values(src, "k", ["float", "32", "16"]) == {"BM": 32, "BN": 16}


def test_every_hand_written_kernel_instance_has_a_checked_launch():
    """Each hand/*.cu has a launch file, and every launch in it passes its checks; the launches
    cover every kernel and explicit instance of the file."""
    from kernelmill.cudasrc.tsparse import functions
    cus = sorted(HAND.glob("*.cu"))
    assert cus
    for cu in cus:
        src = cu.read_text()
        specs = read_launch_file(cu.with_suffix(".launch.json"))
        for s in specs:
            spec_config(src, s)
        have = {(s.kernel, tuple(s.template_args)) for s in specs}
        for f in functions(src):
            if not f.is_kernel:
                continue
            if f.template is None:
                assert (f.name, ()) in have, f"{cu.name}: {f.name} has no launch"
            else:
                import re
                for m in re.finditer(rf"template\s+__global__\s+void\s+{f.name}\s*<([^>]*)>", src):
                    args = tuple(a.strip() for a in m.group(1).split(","))
                    assert (f.name, args) in have, f"{cu.name}: {f.name}<{m.group(1)}> has no launch"


def test_kernel_source_keeps_a_multi_line_macro_whole():
    src = ("#define MUL(a, b) \\\n  ((a) * (b))\n#define ONE 1\n"
           "__global__ void k(float* x) { x[0] = MUL(x[0], ONE); }\n")
    assert "((a) * (b))" in kernel_source(src, "k")


def test_a_standalone_source_has_the_includes_and_file_scope_names_it_uses():
    src = ('#include <torch/extension.h>\n#include <mma.h>\n#include "local.h"\nusing namespace nvcuda;\n'
           "using namespace torch;\n#define N 9\n__constant__ float c_w[N];\n__constant__ float unused[4];\n"
           "typedef float real;\nconstexpr int SCALE = 2;\n"
           "__global__ void k(real* x) { x[threadIdx.x] *= c_w[threadIdx.x % N] * SCALE; }\n")
    out = standalone_kernel_source(src, "k")
    assert "#include <mma.h>" in out and "using namespace nvcuda;" in out
    assert "torch" not in out and "local.h" not in out and "unused" not in out
    for decl in ("__constant__ float c_w[N];", "typedef float real;", "constexpr int SCALE = 2;"):
        assert decl in out
    assert out.index("#define N 9") < out.index("c_w[N]") < out.index("__global__")


@pytest.mark.skipif(not NVCC, reason="nvcc")
def test_hand_written_files_give_pairs_with_configs_whose_harness_builds(tmp_path):
    """build_pairs attaches the launch file's configs; the evaluator's harness of the pair's own
    source (WMMA, a __constant__ array, a multi-line asm macro) builds with nvcc."""
    from kernelmill.ptx.evaluate.config import pair_config
    from kernelmill.ptx.evaluate.harness import Builder, harness_source
    from kernelmill.ptx.pairs import PairConfig, build_pairs
    from kernelmill.records import Pair, iter_jsonl
    files = []
    for name in ("wmma_gemm", "mma_ldmatrix", "stencil_conv"):
        for ext in (".cu", ".launch.json"):
            (tmp_path / f"{name}{ext}").write_text((HAND / f"{name}{ext}").read_text())
        files.append(tmp_path / f"{name}.cu")
    out = tmp_path / "pairs.jsonl"
    build_pairs(files, out, PairConfig())
    pairs = [Pair(**d) for d in iter_jsonl(out) if d["meta"]["status"] == "ok"]
    assert len(pairs) == 11  # 3 + 2 + 6 kernels and instances
    assert all(p.meta["config"]["origin"].startswith("launch file") for p in pairs)
    builder = Builder(tmp_path / "build")
    for p in (p for p in pairs if p.kernel_name in ("hgemm_wmma_smem_64x64", "conv2d_const_window",
                                                    "hgemm_mma_m16n8k16_mma2x4")):
        b = builder.build(harness_source(p.source, pair_config(p)))
        assert b.ok, (p.kernel_name, b.error[:500])


def test_a_broken_launch_file_is_reported_on_the_pairs_not_configured(tmp_path):
    from kernelmill.ptx.evaluate.launch_files import attach_launch_file
    from kernelmill.records import Pair
    cu = tmp_path / "k.cu"
    cu.write_text(KERNEL)
    bad = json.loads(json.dumps({"launches": [{"kernel": "scale_vec", "template_args": ["2"], "sizes": {"n4": 10},
                                               "grid": [1], "block": [32], "bounds": "",
                                               "params": []}]}))
    cu.with_suffix(".launch.json").write_text(json.dumps(bad))
    p = Pair("u:e", "scale_vec", "cuda", KERNEL, "ptx", None, "sm_90", [], None, str(cu),
             {"status": "ok", "signature": "void scale_vec<2>(float4 const*, float4*, float, int)"})
    assert attach_launch_file(cu, [p]) == 0
    assert "config" not in p.meta and "bounds" in p.meta["config_error"]

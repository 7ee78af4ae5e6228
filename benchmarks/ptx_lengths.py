"""Rolled-PTX length reduction, reroll throughput and round-trip pass rate.

Corpus: kernels of our own with unrolled loops, generated below from parameter
grids (elementwise with `#pragma unroll`, block reductions, warp-shuffle
reductions, register-tiled matmuls, 1D/2D stencils, 1D convolutions), plus the
CUDA of the builtin suite's candidates (`tasks/builtin/candidates/*/cuda__*.py`).
Everything is compiled with nvcc -O3 for sm_90, split per kernel, debug info
stripped, rerolled, and checked: expand(reroll(P)) == P on every kernel.
`--ablations` re-measures the same corpus with the paper's linear grammar only
and with each loop-choice plan (dp, greedy).

    python benchmarks/ptx_lengths.py [--json results.json] [--ablations]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from kernelmill.cudasrc import cuda_sources_from_python, strip_host
from kernelmill.ptx import (NvccOptions, RerollConfig, RerollStats, count_tokens, expand_module,
                            fmt_module, nvcc_ptx, parse_module, reroll_module, split_kernels,
                            strip_debug)

OPS = {"relu": "fmaxf(v, 0.f)", "gelu": "0.5f * v * (1.f + tanhf(0.79788456f * (v + 0.044715f * v * v * v)))",
       "silu": "v / (1.f + __expf(-v))", "axpb": "v * 1.5f + 0.25f"}


def elementwise(v: int, op: str, dt: str) -> str:
    load = "v = (float)x[i];" if dt == "float" else "v = __half2float(x[i]);"
    store = "y[i] = r;" if dt == "float" else "y[i] = __float2half(r);"
    return f"""
__global__ void ew_{op}_{dt}_v{v}(const {dt}* __restrict__ x, {dt}* __restrict__ y) {{
  int base = blockIdx.x * blockDim.x * {v} + threadIdx.x;
  #pragma unroll
  for (int k = 0; k < {v}; ++k) {{
    int i = base + k * blockDim.x; float v; {load}
    float r = {OPS[op]}; {store}
  }}
}}"""


def block_reduce(u: int, block: int, op: str) -> str:
    comb = {"sum": "a + b", "max": "fmaxf(a, b)"}[op]
    return f"""
__device__ __forceinline__ float comb_{op}_{u}_{block}(float a, float b) {{ return {comb}; }}
__global__ void reduce_{op}_u{u}_b{block}(const float* __restrict__ x, float* __restrict__ out) {{
  __shared__ float s[{block}];
  int t = threadIdx.x; float acc = x[blockIdx.x * {block * u} + t];
  #pragma unroll
  for (int k = 1; k < {u}; ++k) acc = comb_{op}_{u}_{block}(acc, x[blockIdx.x * {block * u} + k * {block} + t]);
  s[t] = acc; __syncthreads();
  #pragma unroll
  for (int w = {block // 2}; w > 0; w >>= 1) {{ if (t < w) s[t] = comb_{op}_{u}_{block}(s[t], s[t + w]); __syncthreads(); }}
  if (t == 0) out[blockIdx.x] = s[0];
}}"""


def warp_reduce(u: int) -> str:
    return f"""
__global__ void warp_sum_u{u}(const float* __restrict__ x, float* __restrict__ out) {{
  float acc = 0.f; int base = (blockIdx.x * blockDim.x + threadIdx.x) * {u};
  #pragma unroll
  for (int k = 0; k < {u}; ++k) acc += x[base + k];
  #pragma unroll
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffff, acc, o);
  if ((threadIdx.x & 31) == 0) atomicAdd(out, acc);
}}"""


def matmul(tile: int, rm: int, rn: int) -> str:
    return f"""
__global__ void mm_t{tile}_r{rm}x{rn}(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int N) {{
  __shared__ float As[{tile * rm}][{tile}], Bs[{tile}][{tile * rn}];
  float acc[{rm}][{rn}] = {{}};
  int ty = threadIdx.y, tx = threadIdx.x;
  int row = blockIdx.y * {tile * rm} + ty, col = blockIdx.x * {tile * rn} + tx;
  for (int t = 0; t < N; t += {tile}) {{
    #pragma unroll
    for (int i = 0; i < {rm}; ++i) As[ty + i * {tile}][tx] = A[(row + i * {tile}) * N + t + tx];
    #pragma unroll
    for (int j = 0; j < {rn}; ++j) Bs[ty][tx + j * {tile}] = B[(t + ty) * N + col + j * {tile}];
    __syncthreads();
    #pragma unroll
    for (int k = 0; k < {tile}; ++k)
      #pragma unroll
      for (int i = 0; i < {rm}; ++i)
        #pragma unroll
        for (int j = 0; j < {rn}; ++j) acc[i][j] += As[ty + i * {tile}][k] * Bs[k][tx + j * {tile}];
    __syncthreads();
  }}
  #pragma unroll
  for (int i = 0; i < {rm}; ++i)
    #pragma unroll
    for (int j = 0; j < {rn}; ++j) C[(row + i * {tile}) * N + col + j * {tile}] = acc[i][j];
}}"""


def stencil1d(r: int, per: int) -> str:
    return f"""
__global__ void stencil1d_r{r}_p{per}(const float* __restrict__ x, float* __restrict__ y, const float* __restrict__ w) {{
  int base = (blockIdx.x * blockDim.x + threadIdx.x) * {per} + {r};
  #pragma unroll
  for (int p = 0; p < {per}; ++p) {{
    float acc = 0.f;
    #pragma unroll
    for (int d = -{r}; d <= {r}; ++d) acc += w[d + {r}] * x[base + p + d];
    y[base + p] = acc;
  }}
}}"""


def stencil2d(r: int) -> str:
    return f"""
__global__ void stencil2d_r{r}(const float* __restrict__ x, float* __restrict__ y, int W) {{
  int cx = blockIdx.x * blockDim.x + threadIdx.x + {r}, cy = blockIdx.y * blockDim.y + threadIdx.y + {r};
  float acc = 0.f;
  #pragma unroll
  for (int dy = -{r}; dy <= {r}; ++dy)
    #pragma unroll
    for (int dx = -{r}; dx <= {r}; ++dx) acc += x[(cy + dy) * W + cx + dx] * {1.0 / (2 * r + 1) ** 2:.6f}f;
  y[cy * W + cx] = acc;
}}"""


def conv1d(k: int, cin: int) -> str:
    return f"""
__global__ void conv1d_k{k}_c{cin}(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int L) {{
  int o = blockIdx.x * blockDim.x + threadIdx.x; float acc = 0.f;
  #pragma unroll
  for (int c = 0; c < {cin}; ++c)
    #pragma unroll
    for (int t = 0; t < {k}; ++t) acc += w[(blockIdx.y * {cin} + c) * {k} + t] * x[c * L + o + t];
  y[blockIdx.y * L + o] = acc;
}}"""


def corpus() -> dict[str, str]:
    """family -> CUDA source holding that family's kernels (one nvcc call each)."""
    fam: dict[str, list[str]] = {k: [] for k in ("elementwise", "reduce", "warp", "matmul", "stencil", "conv")}
    for v in (2, 4, 8, 16, 32):
        for op in OPS:
            for dt in ("float", "__half"):
                fam["elementwise"].append(elementwise(v, op, dt))
    for u in (2, 4, 8, 16, 32):
        for block in (64, 128, 256, 512, 1024):
            for op in ("sum", "max"):
                fam["reduce"].append(block_reduce(u, block, op))
    for u in (1, 2, 4, 8, 16, 32, 64, 128):
        fam["warp"].append(warp_reduce(u))
    for tile in (4, 8, 16, 32):
        for rm in (1, 2, 4):
            for rn in (1, 2, 4):
                fam["matmul"].append(matmul(tile, rm, rn))
    for r in (1, 2, 3, 4, 6, 8, 10, 12):
        for per in (1, 2, 4, 8):
            fam["stencil"].append(stencil1d(r, per))
    for r in (1, 2, 3, 4, 5, 6, 7):
        fam["stencil"].append(stencil2d(r))
    for k in (3, 5, 7, 9, 11, 13, 15):
        for cin in (1, 2, 4, 8):
            fam["conv"].append(conv1d(k, cin))
    hdr = "#include <cuda_fp16.h>\n"
    return {name: hdr + "\n".join(srcs) for name, srcs in fam.items()}


def builtin_sources() -> dict[str, str]:
    root = Path(__file__).resolve().parents[1] / "src/kernelmill/tasks/builtin/candidates"
    out = {}
    for f in sorted(root.glob("*/*/cuda__ok.py")):
        for i, s in enumerate(cuda_sources_from_python(f.read_text(), str(f))):
            out[f"builtin:{f.parent.name}:{i}"] = strip_host(s)
    return out


def compile_corpus(arch: str) -> tuple[list[tuple[str, str, object, str]], list]:
    """[(unit family, kernel, parsed module, plain PTX text)] and the units nvcc refused."""
    opts = NvccOptions(arch=arch, opt=3, unroll=True)
    kernels, failed_units = [], []
    for name, src in {**corpus(), **builtin_sources()}.items():
        try:
            ptx = nvcc_ptx(src, opts)
        except Exception as exc:  # noqa: BLE001 - report and continue
            failed_units.append((name, str(exc).splitlines()[0]))
            continue
        for entry, mod in split_kernels(strip_debug(parse_module(ptx, name))).items():
            kernels.append((name.split(":")[0], entry, mod, fmt_module(mod)))
    return kernels, failed_units


def measure(kernels, cfg: RerollConfig) -> tuple[list[dict], float, float, int]:
    """Per-kernel rows, wall and CPU seconds spent in reroll_module, bytes of plain PTX."""
    rows, wall, cpu, size = [], 0.0, 0.0, 0
    for unit, entry, mod, plain in kernels:
        st = RerollStats()
        w0, c0 = time.perf_counter(), time.process_time()
        rolled = reroll_module(mod, cfg, stats=st)
        wall, cpu = wall + time.perf_counter() - w0, cpu + time.process_time() - c0
        size += len(plain.encode())
        ok = st.failed == 0 and fmt_module(expand_module(rolled)) == plain
        a, b = count_tokens(plain), count_tokens(fmt_module(rolled))
        rows.append({"unit": unit, "kernel": entry, "tokens": a, "rolled": b, "reduction": 1 - b / a,
                     "loops": st.loops, "geometric_loops": st.geometric_loops, "roundtrip_ok": ok})
    return rows, wall, cpu, size


def summary(sel: list[dict]) -> str:
    red = [r["reduction"] for r in sel]
    tot_a, tot_b = sum(r["tokens"] for r in sel), sum(r["rolled"] for r in sel)
    return (f"{len(sel)} kernels, reduction mean {100 * statistics.mean(red):.1f}% "
            f"median {100 * statistics.median(red):.1f}% (tokens {tot_a} -> {tot_b}, "
            f"{100 * (1 - tot_b / tot_a):.1f}% overall)")


# (label, config): the paper's linear grammar vs ours, and the two plans
ABLATIONS = [("linear grammar, greedy (PtxDec's algorithm)", RerollConfig(geometric=False, tables=False, strategy="greedy")),
             ("linear grammar, best of dp/greedy", RerollConfig(geometric=False, tables=False, strategy="best")),
             ("geometric terms, greedy", RerollConfig(strategy="greedy")),
             ("geometric terms, dp", RerollConfig(strategy="dp")),
             ("geometric terms, best of dp/greedy (default)", RerollConfig())]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path, help="write per-kernel results here")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--ablations", action="store_true",
                    help="also measure the linear-only grammar and each plan on the same corpus")
    args = ap.parse_args()
    kernels, failed_units = compile_corpus(args.arch)
    rows, wall, cpu, size = measure(kernels, RerollConfig())
    own = [r for r in rows if r["unit"] != "builtin"]
    for label, sel in (("own corpus", own), ("builtin candidates", [r for r in rows if r["unit"] == "builtin"]),
                       ("all", rows)):
        if sel:
            print(f"{label}: {summary(sel)}; kernels with a loop {sum(r['loops'] > 0 for r in sel)}/{len(sel)}, "
                  f"with a geometric loop {sum(r['geometric_loops'] > 0 for r in sel)}")
    for f in sorted({r["unit"] for r in own}):
        red = [r["reduction"] for r in own if r["unit"] == f]
        print(f"  {f:12s} {len(red):4d} kernels  mean {100 * statistics.mean(red):5.1f}%  "
              f"median {100 * statistics.median(red):5.1f}%")
    print(f"round trip expand(reroll(P)) == P: {sum(r['roundtrip_ok'] for r in rows)}/{len(rows)}")
    print(f"reroll throughput: {size / 1e6 / wall:.2f} MB/s wall, {size / 1e6 / cpu:.2f} MB/s CPU "
          f"({size / 1e6:.2f} MB in {wall:.2f} s wall, {cpu:.2f} s CPU)")
    if args.ablations:
        print("ablations (own corpus):")
        for label, cfg in ABLATIONS:
            r, w, c, n = measure(kernels, cfg)
            r_own = [x for x in r if x["unit"] != "builtin"]
            print(f"  {label}: {summary(r_own)}; round trip {sum(x['roundtrip_ok'] for x in r)}/{len(r)}; "
                  f"{n / 1e6 / c:.2f} MB/s CPU")
    if failed_units:
        print("units that did not compile:", failed_units)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()

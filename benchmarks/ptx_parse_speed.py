"""PTX parser speed on large nvcc output: MB/s, and time per MB as the file grows.

The PTX is made here: unrolled kernels (fma chains over register arrays, shared
memory tiles, fp16 vector loads) instantiated at many sizes in one translation
unit and compiled with nvcc -O3 for sm_90, once plain and once with -lineinfo
(a `.loc` before most instructions). The files are cached in --cache. Each file
is parsed whole and cut after 1/8, 1/4, 1/2 of its kernels: a linear parser
takes the same seconds per MB at every length.

    python benchmarks/ptx_parse_speed.py [--cache DIR] [--target-mb 2.0] [--json out.json]
        [--cpu] [--corpus /tmp/kernelmill-ptx-reroll-speed]
"""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path

from kernelmill.ptx import NvccOptions, nvcc_ptx, parse_module

KERNELS = r"""
#include <cuda_fp16.h>
template <int R, int U>
__global__ void chain(const float* __restrict__ x, float* __restrict__ y, const float* __restrict__ w) {
  float acc[U];
  #pragma unroll
  for (int i = 0; i < U; ++i) acc[i] = x[threadIdx.x + i * 128];
  #pragma unroll
  for (int r = 0; r < R; ++r) {
    #pragma unroll
    for (int i = 0; i < U; ++i) acc[i] = fmaf(acc[i], w[blockIdx.x * 4096 + r * U + i], acc[(i + 1) % U]);
    if (acc[r % U] > 1.f) acc[0] += __shfl_xor_sync(0xffffffff, acc[1], 16);
  }
  #pragma unroll
  for (int i = 0; i < U; ++i) y[threadIdx.x + i * 128] = acc[i];
}
template <int T>
__global__ void tile(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n) {
  __shared__ float as[T][T + 1], bs[T][T + 1];
  float acc = 0.f;
  for (int k0 = 0; k0 < n; k0 += T) {
    as[threadIdx.y][threadIdx.x] = a[(blockIdx.y * T + threadIdx.y) * n + k0 + threadIdx.x];
    bs[threadIdx.y][threadIdx.x] = b[(k0 + threadIdx.y) * n + blockIdx.x * T + threadIdx.x];
    __syncthreads();
    #pragma unroll
    for (int k = 0; k < T; ++k) acc += as[threadIdx.y][k] * bs[k][threadIdx.x];
    __syncthreads();
  }
  c[(blockIdx.y * T + threadIdx.y) * n + blockIdx.x * T + threadIdx.x] = acc;
}
template <int V>
__global__ void half_scale(const __half2* __restrict__ x, __half2* __restrict__ y, __half2 s) {
  #pragma unroll
  for (int k = 0; k < V; ++k) {
    int i = (blockIdx.x * V + k) * blockDim.x + threadIdx.x;
    y[i] = __hfma2(x[i], s, x[i + 1]);
  }
}
"""


def source(scale: int) -> str:
    inst = []
    for r, u in [(24, 32), (40, 16), (30, 24), (16, 48), (20, 20), (12, 40)][:max(1, scale)]:
        inst.append(f"template __global__ void chain<{r}, {u}>(const float*, float*, const float*);")
    for k in range(scale * 3):
        r, u = 8 + 4 * k, 8 + 8 * (k % 4)
        inst.append(f"template __global__ void chain<{r}, {u}>(const float*, float*, const float*);")
    for t in (8, 16, 32)[:scale]:
        inst.append(f"template __global__ void tile<{t}>(const float*, const float*, float*, int);")
    for v in (4, 8, 16, 32, 64)[:scale + 1]:
        inst.append(f"template __global__ void half_scale<{v}>(const __half2*, __half2*, __half2);")
    return KERNELS + "\n".join(inst) + "\n"


def make(cache: Path, target_mb: float, lineinfo: bool) -> Path:
    cache.mkdir(parents=True, exist_ok=True)
    scale = 1
    while True:
        f = cache / f"unrolled_s{scale}{'_lineinfo' if lineinfo else ''}.ptx"
        if not f.exists():
            extra = ("-lineinfo",) if lineinfo else ()
            f.write_text(nvcc_ptx(source(scale), NvccOptions(extra=extra)))
        if len(f.read_bytes()) >= target_mb * 1e6 or scale >= 12:
            return f
        scale += 1


def prefixes(text: str) -> list[str]:
    """The file cut after 1/8, 1/4, 1/2 of its kernels, and whole."""
    starts = [m.start() for m in re.finditer(r"^\.visible \.entry", text, re.M)]
    out = []
    for frac in (8, 4, 2):
        k = max(1, len(starts) // frac)
        if k < len(starts):
            out.append(text[:starts[k]])
    return out + [text]


def timed(fn, text: str, repeat: int, clock=time.perf_counter) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = clock()
        fn(text)
        best = min(best, clock() - t0)
    return best


def corpus_rate(folder: Path, repeat: int, clock) -> dict:
    """Every .ptx file of `folder` parsed in turn, best of `repeat` passes: MB/s over the whole."""
    texts = [p.read_text() for p in sorted(folder.glob("*.ptx"))]
    if not texts:
        raise SystemExit(f"{folder}: no .ptx files")
    mb = sum(len(t.encode()) for t in texts) / 1e6
    s = timed(lambda _: [parse_module(t) for t in texts], "", repeat, clock)
    return {"corpus": str(folder), "files": len(texts), "mb": round(mb, 3), "seconds": round(s, 3),
            "mb_per_s": round(mb / s, 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", type=Path, default=Path("/tmp/kernelmill-ptx-speed"))
    ap.add_argument("--target-mb", type=float, default=2.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--cpu", action="store_true",
                    help="this process's CPU time instead of wall time (a shared machine's other work left out)")
    ap.add_argument("--corpus", type=Path, action="append", default=[],
                    help="also a folder of .ptx files parsed in turn (e.g. ptx_reroll_speed.py's --cache): "
                         "MB/s over the whole folder (repeatable)")
    args = ap.parse_args()
    clock = time.process_time if args.cpu else time.perf_counter
    rows = []
    for folder in args.corpus:
        row = corpus_rate(folder, args.repeat, clock)
        rows.append(row)
        print(f"{folder.name:32s} {row['files']:3d} files {row['mb']:6.2f} MB  parse {row['seconds']:6.2f} s  "
              f"{row['mb_per_s']:5.2f} MB/s")
    for lineinfo in (False, True):
        f = make(args.cache, args.target_mb, lineinfo)
        text = f.read_text()
        for part in prefixes(text):
            mb = len(part.encode()) / 1e6
            s = timed(parse_module, part, args.repeat, clock)
            rows.append({"file": f.name, "mb": round(mb, 3), "seconds": round(s, 3),
                         "mb_per_s": round(mb / s, 2), "s_per_mb": round(s / mb, 3)})
            print(f"{f.name:32s} {mb:6.2f} MB  parse {s:6.2f} s  {mb / s:5.2f} MB/s  "
                  f"{s / mb:5.2f} s per MB")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()

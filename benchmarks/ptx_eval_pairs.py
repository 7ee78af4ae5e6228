"""Evaluation pairs for `kernelmill ptx evaluate`, made from this repo alone.

Parametrised CUDA kernel families (elementwise, vectorised, bias+activation,
grid-stride, row reductions, softmax, 1-D/2-D stencils, shared-memory GEMM
tiles, transposes), each instance an ``extern "C" __global__`` kernel with its
sizes compiled in (as a tensor compiler writes them) and its launch
configuration stored in ``meta.config`` (the contract of docs/FORMATS.md). A
family's instances are compiled with nvcc in one unit, split into one Pair per
kernel with Rolled-PTX by the `ptx pairs` machinery (`pairs_from_ptx`).

With ``--answers FILE`` it also scripts a "decompiler" for the fake server:
per pair one completion, by a stable hash of the pair id: right answers
(locals renamed, reformatted: CodeBLEU < 1, same schedule), right answers
with another schedule where the family has one (naive GEMM, naive transpose,
serial reduction), wrong answers (a store perturbed, an index shifted),
answers that do not compile, that fault (out-of-bounds store), that hang,
and replies with no code block.

    python benchmarks/ptx_eval_pairs.py -o pairs.jsonl [--answers answers.jsonl] [--limit N]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from kernelmill.ptx.nvcc import NvccOptions, nvcc_ptx
from kernelmill.ptx.pairs import PairConfig, pairs_from_ptx
from kernelmill.records import write_jsonl

CT = {"f32": "float", "f16": "__half"}
DT = {"f32": "float32", "f16": "float16"}


def _ld(t, e):
    return e if t == "f32" else f"__half2float({e})"


def _st(t, e):
    return e if t == "f32" else f"__float2half({e})"


def P(name, shape, dtype, role):
    return {"name": name, "shape": list(shape), "dtype": dtype, "role": role}


def cfg(params, grid, block, smem=0):
    ins = [{"shape": p["shape"], "dtype": p["dtype"]} for p in params if p["role"] == "in"]
    outs = [{"shape": p["shape"], "dtype": p["dtype"]} for p in params if p["role"] == "out"]
    g = list(grid) + [1] * (3 - len(grid))
    b = list(block) + [1] * (3 - len(block))
    return {"inputs": ins, "outputs": outs, "params": params, "grid": g, "block": b, "shared_mem": smem}


# --- families: each yields (kernel name, source, config, variant sources) ----------

BIN = {"add": "a + b", "mul": "a * b", "sub": "a - b", "max": "fmaxf(a, b)"}
UNARY = {"relu": "fmaxf(v, 0.0f)", "gelu": "0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)))",
         "sigmoid": "1.0f / (1.0f + expf(-v))", "scale_exp": "expf(0.5f * v) - 1.0f"}
ACT = {"relu": "fmaxf(v, 0.0f)", "tanh": "tanhf(v)", "silu": "v / (1.0f + expf(-v))"}


def elementwise():
    for op, expr in BIN.items():
        for t in ("f32", "f16"):
            for n in (4096, 65536, 1 << 20):
                for bs in (128, 256, 512):
                    k = f"ew_{op}_{t}_n{n}_b{bs}"
                    c = CT[t]
                    src = (f'extern "C" __global__ void __launch_bounds__({bs}) {k}(const {c}* __restrict__ x, '
                           f"const {c}* __restrict__ y, {c}* __restrict__ out) {{\n"
                           f"  int idx = blockIdx.x * {bs} + threadIdx.x;\n"
                           f"  if (idx < {n}) {{\n"
                           f"    float a = {_ld(t, 'x[idx]')};\n    float b = {_ld(t, 'y[idx]')};\n"
                           f"    out[idx] = {_st(t, expr)};\n  }}\n}}\n")
                    yield k, src, cfg([P("x", [n], DT[t], "in"), P("y", [n], DT[t], "in"),
                                       P("out", [n], DT[t], "out")], [(n + bs - 1) // bs], [bs]), {}


def unary():
    for op, expr in UNARY.items():
        for t in ("f32", "f16"):
            for n in (8192, 131072, 1 << 20):
                for bs in (256, 1024):
                    k = f"un_{op}_{t}_n{n}_b{bs}"
                    c = CT[t]
                    src = (f'extern "C" __global__ void __launch_bounds__({bs}) {k}(const {c}* __restrict__ x, '
                           f"{c}* __restrict__ out) {{\n"
                           f"  int idx = blockIdx.x * {bs} + threadIdx.x;\n"
                           f"  if (idx < {n}) {{\n    float v = {_ld(t, 'x[idx]')};\n"
                           f"    out[idx] = {_st(t, expr)};\n  }}\n}}\n")
                    yield k, src, cfg([P("x", [n], DT[t], "in"), P("out", [n], DT[t], "out")],
                                      [(n + bs - 1) // bs], [bs]), {}


def vectorised():
    for op in ("add", "mul"):
        for n in (16384, 262144, 1 << 21):
            for bs in (128, 256):
                k = f"vec4_{op}_n{n}_b{bs}"
                e = {"add": "+", "mul": "*"}[op]
                src = (f'extern "C" __global__ void __launch_bounds__({bs}) {k}(const float4* __restrict__ x, '
                       f"const float4* __restrict__ y, float4* __restrict__ out) {{\n"
                       f"  int idx = blockIdx.x * {bs} + threadIdx.x;\n"
                       f"  if (idx < {n // 4}) {{\n    float4 a = x[idx];\n    float4 b = y[idx];\n"
                       f"    out[idx] = make_float4(a.x {e} b.x, a.y {e} b.y, a.z {e} b.z, a.w {e} b.w);\n  }}\n}}\n")
                yield k, src, cfg([P("x", [n], "float32", "in"), P("y", [n], "float32", "in"),
                                   P("out", [n], "float32", "out")], [(n // 4 + bs - 1) // bs], [bs]), {}


def bias_act():
    for op, expr in ACT.items():
        for rows, cols in ((64, 256), (512, 1024), (128, 3072)):
            for bx, by in ((32, 8), (64, 4)):
                k = f"bias_{op}_{rows}x{cols}_b{bx}x{by}"
                src = (f'extern "C" __global__ void {k}(const float* __restrict__ x, const float* __restrict__ bias, '
                       f"float* __restrict__ out) {{\n"
                       f"  int col = blockIdx.x * {bx} + threadIdx.x;\n  int row = blockIdx.y * {by} + threadIdx.y;\n"
                       f"  if (row < {rows} && col < {cols}) {{\n"
                       f"    float v = x[row * {cols} + col] + bias[col];\n"
                       f"    out[row * {cols} + col] = {expr};\n  }}\n}}\n")
                yield k, src, cfg([P("x", [rows, cols], "float32", "in"), P("bias", [cols], "float32", "in"),
                                   P("out", [rows, cols], "float32", "out")],
                                  [(cols + bx - 1) // bx, (rows + by - 1) // by], [bx, by]), {}


def grid_stride():
    for n in (1 << 18, 1 << 21, 3000000):
        for blocks in (132, 264, 528):
            k = f"gs_axpy_n{n}_g{blocks}"
            src = (f'extern "C" __global__ void {k}(const float* __restrict__ x, const float* __restrict__ y, '
                   f"float* __restrict__ out) {{\n"
                   f"  for (int i = blockIdx.x * 256 + threadIdx.x; i < {n}; i += {blocks} * 256) {{\n"
                   f"    out[i] = 2.5f * x[i] + y[i];\n  }}\n}}\n")
            yield k, src, cfg([P("x", [n], "float32", "in"), P("y", [n], "float32", "in"),
                               P("out", [n], "float32", "out")], [blocks], [256]), {}


def reduction():
    for op in ("sum", "max"):
        for rows, cols in ((256, 1024), (1024, 512), (64, 4096)):
            for bs in (128, 256):
                k = f"row{op}_{rows}x{cols}_b{bs}"
                comb = "acc + v" if op == "sum" else "fmaxf(acc, v)"
                init = "0.0f" if op == "sum" else "-INFINITY"
                src = (f'extern "C" __global__ void {k}(const float* __restrict__ x, float* __restrict__ out) {{\n'
                       f"  __shared__ float buf[{bs}];\n  int row = blockIdx.x;\n  float acc = {init};\n"
                       f"  for (int c = threadIdx.x; c < {cols}; c += {bs}) {{\n"
                       f"    float v = x[row * {cols} + c];\n    acc = {comb};\n  }}\n"
                       f"  buf[threadIdx.x] = acc;\n  __syncthreads();\n"
                       f"  for (int s = {bs // 2}; s > 0; s >>= 1) {{\n"
                       f"    if (threadIdx.x < s) {{ float v = buf[threadIdx.x + s]; float acc2 = buf[threadIdx.x]; "
                       f"buf[threadIdx.x] = {comb.replace('acc', 'acc2')}; }}\n"
                       f"    __syncthreads();\n  }}\n"
                       f"  if (threadIdx.x == 0) out[row] = buf[0];\n}}\n")
                serial = (f'extern "C" __global__ void {k}(const float* __restrict__ x, float* __restrict__ out) {{\n'
                          f"  int row = blockIdx.x;\n  if (threadIdx.x != 0) return;\n  float acc = {init};\n"
                          f"  for (int c = 0; c < {cols}; ++c) {{\n    float v = x[row * {cols} + c];\n"
                          f"    acc = {comb};\n  }}\n  out[row] = acc;\n}}\n")
                yield k, src, cfg([P("x", [rows, cols], "float32", "in"), P("out", [rows], "float32", "out")],
                                  [rows], [bs]), {"schedule": serial}


def softmax():
    for rows, cols in ((128, 1024), (512, 256), (64, 2048)):
        for bs in (128, 256):
            k = f"softmax_{rows}x{cols}_b{bs}"
            src = (f'extern "C" __global__ void {k}(const float* __restrict__ x, float* __restrict__ out) {{\n'
                   f"  __shared__ float red[{bs}];\n  const float* in_row = x + blockIdx.x * {cols};\n"
                   f"  float* out_row = out + blockIdx.x * {cols};\n  float m = -INFINITY;\n"
                   f"  for (int c = threadIdx.x; c < {cols}; c += {bs}) m = fmaxf(m, in_row[c]);\n"
                   f"  red[threadIdx.x] = m;\n  __syncthreads();\n"
                   f"  for (int s = {bs // 2}; s > 0; s >>= 1) {{\n"
                   f"    if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);\n"
                   f"    __syncthreads();\n  }}\n  m = red[0];\n  __syncthreads();\n  float total = 0.0f;\n"
                   f"  for (int c = threadIdx.x; c < {cols}; c += {bs}) total += expf(in_row[c] - m);\n"
                   f"  red[threadIdx.x] = total;\n  __syncthreads();\n"
                   f"  for (int s = {bs // 2}; s > 0; s >>= 1) {{\n"
                   f"    if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];\n    __syncthreads();\n  }}\n"
                   f"  total = red[0];\n"
                   f"  for (int c = threadIdx.x; c < {cols}; c += {bs}) out_row[c] = expf(in_row[c] - m) / total;\n}}\n")
            yield k, src, cfg([P("x", [rows, cols], "float32", "in"), P("out", [rows, cols], "float32", "out")],
                              [rows], [bs]), {}


def stencil():
    for n in (65536, 1 << 20, 1000000):
        for bs in (128, 256):
            k = f"st1d_n{n}_b{bs}"
            src = (f'extern "C" __global__ void {k}(const float* __restrict__ x, float* __restrict__ out) {{\n'
                   f"  __shared__ float tile[{bs} + 2];\n  int i = blockIdx.x * {bs} + threadIdx.x;\n"
                   f"  tile[threadIdx.x + 1] = i < {n} ? x[i] : 0.0f;\n"
                   f"  if (threadIdx.x == 0) tile[0] = i > 0 ? x[i - 1] : 0.0f;\n"
                   f"  if (threadIdx.x == {bs - 1}) tile[{bs + 1}] = i + 1 < {n} ? x[i + 1] : 0.0f;\n"
                   f"  __syncthreads();\n"
                   f"  if (i < {n}) out[i] = 0.25f * tile[threadIdx.x] + 0.5f * tile[threadIdx.x + 1] "
                   f"+ 0.25f * tile[threadIdx.x + 2];\n}}\n")
            yield k, src, cfg([P("x", [n], "float32", "in"), P("out", [n], "float32", "out")],
                              [(n + bs - 1) // bs], [bs]), {}
    for h, w in ((256, 256), (512, 1024), (1000, 700)):
        for bx, by in ((32, 8), (16, 16)):
            k = f"st2d_{h}x{w}_b{bx}x{by}"
            src = (f'extern "C" __global__ void {k}(const float* __restrict__ x, float* __restrict__ out) {{\n'
                   f"  int c = blockIdx.x * {bx} + threadIdx.x;\n  int r = blockIdx.y * {by} + threadIdx.y;\n"
                   f"  if (r >= 1 && r < {h - 1} && c >= 1 && c < {w - 1}) {{\n"
                   f"    int p = r * {w} + c;\n"
                   f"    out[p] = 0.2f * (x[p] + x[p - 1] + x[p + 1] + x[p - {w}] + x[p + {w}]);\n"
                   f"  }} else if (r < {h} && c < {w}) {{\n    out[r * {w} + c] = x[r * {w} + c];\n  }}\n}}\n")
            yield k, src, cfg([P("x", [h, w], "float32", "in"), P("out", [h, w], "float32", "out")],
                              [(w + bx - 1) // bx, (h + by - 1) // by], [bx, by]), {}


def gemm():
    for t in (8, 16, 32):
        for m, n, kk in ((64, 64, 64), (128, 256, 128), (256, 128, 512), (512, 512, 256)):
            k = f"gemm_t{t}_{m}x{n}x{kk}"
            src = (f'extern "C" __global__ void {k}(const float* __restrict__ A, const float* __restrict__ B, '
                   f"float* __restrict__ C) {{\n"
                   f"  __shared__ float As[{t}][{t}];\n  __shared__ float Bs[{t}][{t}];\n"
                   f"  int row = blockIdx.y * {t} + threadIdx.y;\n  int col = blockIdx.x * {t} + threadIdx.x;\n"
                   f"  float acc = 0.0f;\n"
                   f"  for (int k0 = 0; k0 < {kk}; k0 += {t}) {{\n"
                   f"    As[threadIdx.y][threadIdx.x] = A[row * {kk} + k0 + threadIdx.x];\n"
                   f"    Bs[threadIdx.y][threadIdx.x] = B[(k0 + threadIdx.y) * {n} + col];\n"
                   f"    __syncthreads();\n"
                   f"#pragma unroll\n    for (int j = 0; j < {t}; ++j) acc += As[threadIdx.y][j] * Bs[j][threadIdx.x];\n"
                   f"    __syncthreads();\n  }}\n  C[row * {n} + col] = acc;\n}}\n")
            naive = (f'extern "C" __global__ void {k}(const float* __restrict__ A, const float* __restrict__ B, '
                     f"float* __restrict__ C) {{\n"
                     f"  int row = blockIdx.y * {t} + threadIdx.y;\n  int col = blockIdx.x * {t} + threadIdx.x;\n"
                     f"  float acc = 0.0f;\n  for (int k = 0; k < {kk}; ++k) acc += A[row * {kk} + k] * B[k * {n} + col];\n"
                     f"  C[row * {n} + col] = acc;\n}}\n")
            yield k, src, cfg([P("A", [m, kk], "float32", "in"), P("B", [kk, n], "float32", "in"),
                               P("C", [m, n], "float32", "out")], [n // t, m // t], [t, t]), {"schedule": naive}


def transpose():
    for h, w in ((256, 256), (1024, 512), (2048, 2048)):
        for pad in (0, 1):
            k = f"transpose_{h}x{w}_pad{pad}"
            src = (f'extern "C" __global__ void {k}(const float* __restrict__ x, float* __restrict__ out) {{\n'
                   f"  __shared__ float tile[32][32 + {pad}];\n"
                   f"  int c = blockIdx.x * 32 + threadIdx.x;\n  int r0 = blockIdx.y * 32;\n"
                   f"  for (int j = threadIdx.y; j < 32; j += 8) tile[j][threadIdx.x] = x[(r0 + j) * {w} + c];\n"
                   f"  __syncthreads();\n  int oc = r0 + threadIdx.x;\n  int or0 = blockIdx.x * 32;\n"
                   f"  for (int j = threadIdx.y; j < 32; j += 8) out[(or0 + j) * {h} + oc] = tile[threadIdx.x][j];\n}}\n")
            naive = (f'extern "C" __global__ void {k}(const float* __restrict__ x, float* __restrict__ out) {{\n'
                     f"  int c = blockIdx.x * 32 + threadIdx.x;\n"
                     f"  for (int j = threadIdx.y; j < 32; j += 8) {{\n    int r = blockIdx.y * 32 + j;\n"
                     f"    out[c * {h} + r] = x[r * {w} + c];\n  }}\n}}\n")
            yield k, src, cfg([P("x", [h, w], "float32", "in"), P("out", [w, h], "float32", "out")],
                              [w // 32, h // 32], [32, 8]), {"schedule": naive}


FAMILIES = (elementwise, unary, vectorised, bias_act, grid_stride, reduction, softmax, stencil, gemm, transpose)
PRELUDE = "#include <cuda_fp16.h>\n#include <math.h>\n\n"


# --- scripted decompiler answers -----------------------------------------------------

def _h(s: str) -> float:
    return int(hashlib.sha256(s.encode()).hexdigest()[:8], 16) / 2**32


def rename_locals(src: str) -> str:
    """Every local variable declared in the kernel renamed (v -> v_val ...), one blank line
    after each statement block: the same program, read differently."""
    names = set(re.findall(r"\b(?:int|float|float4|const float\*|float\*)\s+([a-z_]\w*)\s*=", src))
    names |= set(re.findall(r"for \(int ([a-z_]\w*)", src))
    for i, n in enumerate(sorted(names)):
        src = re.sub(rf"\b{re.escape(n)}\b", f"{n}_{'tvi'[i % 3]}{i}", src)
    return src.replace(";\n", ";\n\n", 2)


def answer_for(pair_id: str, src: str, variants: dict, outputs: list[str]) -> tuple[str, str]:
    """(kind, completion) of the scripted decompiler for one pair."""
    from kernelmill.ptx.evaluate.candidates import NoStore, perturb
    kernel = re.search(r"void (?:__launch_bounds__\(\d+\) )?(\w+)\(", src).group(1)
    u = _h(pair_id)
    if "schedule" in variants and u < 0.5:
        return "right_other_schedule", f"```cuda\n{PRELUDE}{variants['schedule']}```\n"
    if u < 0.55:
        kind, code = "right_renamed", rename_locals(src)
    elif u < 0.65:
        kind, code = "right_verbatim", src
    elif u < 0.75:
        try:
            kind, code = "wrong_perturbed", perturb(src, kernel, outputs)
        except NoStore:
            kind, code = "right_verbatim", src
    elif u < 0.80 and re.search(r"\[(idx|i|p|row \* \d+ \+ col)\]", src):  # reads the next element
        kind, code = "wrong_index", re.sub(r"\[(idx|i|p|row \* \d+ \+ col)\]", r"[\1 + 1]", src, count=1)
    elif u < 0.80:
        kind, code = "wrong_perturbed", perturb(src, kernel, outputs)
    elif u < 0.88:
        kind, code = "no_compile", src.replace("{\n", "{\n  undeclared_value += 1;\n", 1)
    elif u < 0.92:
        kind, code = "fault", src.replace("{\n", "{\n  if (threadIdx.x == 0) ((float*)0x100)[blockIdx.x] = 1.0f;\n", 1)
    elif u < 0.935:
        # a loop on a volatile local lived in a register and ptxas dropped it: on the H100 both
        # such "hangs" finished with the right output at the reference's speed; clock64 is a
        # volatile read of the clock that stays in the code
        kind, code = "hang", src.replace("{\n", "{\n  while (clock64() >= 0) {}\n", 1)
    elif u < 0.96:
        return "no_code", "I cannot decompile this PTX."
    else:
        kind, code = "right_verbatim", src
    return kind, f"Here is the CUDA source.\n\n```cuda\n{code}```\n"


def build(out: Path, answers: Path | None, limit: int | None, arch: str, jobs: int) -> dict:
    units = []
    for fam in FAMILIES:
        items = list(fam())
        units.append((fam.__name__, items))
    if limit is not None:  # keep every family: the first instances of each, round robin
        kept, k = [[] for _ in units], 0
        while sum(map(len, kept)) < limit and k < max(len(i) for _, i in units):
            for j, (_, items) in enumerate(units):
                if k < len(items) and sum(map(len, kept)) < limit:
                    kept[j].append(items[k])
            k += 1
        units = [(name, kept[j]) for j, (name, _) in enumerate(units) if kept[j]]

    def compile_unit(unit):
        name, items = unit
        src = PRELUDE + "\n".join(s for _, s, _, _ in items)
        ptx = nvcc_ptx(src, NvccOptions(arch))
        by_kernel = {k: (s, c, v) for k, s, c, v in items}
        pairs = pairs_from_ptx(ptx, language="cuda", origin=f"benchmarks/ptx_eval_pairs.py#{name}",
                               unit_id=hashlib.sha1(src.encode()).hexdigest()[:16], target=arch,
                               options=[f"-arch={arch}", "-O3"], source_of=lambda k: PRELUDE + by_kernel[k][0],
                               launch_of=lambda k: None, cfg=PairConfig(archs=(arch,)))
        for p in pairs:
            p.meta["config"] = by_kernel[p.kernel_name][1]
            p.meta["family"] = name
        return pairs, by_kernel

    with ThreadPoolExecutor(max(1, jobs)) as ex:
        done = list(ex.map(compile_unit, units))
    pairs = [p for ps, _ in done for p in ps]
    seen, unique = set(), []
    for p in pairs:  # a scripted server recognises a pair by its PTX: keep PTX unique
        if p.ptx not in seen:
            seen.add(p.ptx)
            unique.append(p)
    write_jsonl(out, unique)
    kinds: dict[str, int] = {}
    if answers is not None:
        rows = []
        allk = {k: v for _, bk in done for k, v in bk.items()}
        for p in unique:
            src, c, variants = allk[p.kernel_name]
            outs = [q["name"] for q in c["params"] if q["role"] == "out"]
            kind, text = answer_for(p.pair_id, PRELUDE + src, variants, outs)
            kinds[kind] = kinds.get(kind, 0) + 1
            rows.append({"task_id": p.pair_id, "completion": text, "kind": kind})
        answers.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return {"pairs": len(unique), "families": {n: len(i) for n, i in units}, "answers": kinds}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--out", type=Path, required=True, help="pairs JSONL to write")
    ap.add_argument("--answers", type=Path, help="scripted decompiler answers JSONL for the fake server")
    ap.add_argument("--limit", type=int, help="at most N kernels (every family kept)")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--jobs", type=int, default=8, help="nvcc processes in parallel")
    a = ap.parse_args(argv)
    print(json.dumps(build(a.out, a.answers, a.limit, a.arch, a.jobs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

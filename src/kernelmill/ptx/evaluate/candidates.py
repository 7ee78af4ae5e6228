"""Candidate sets made from the pairs themselves, to check the evaluator:

* ``reference``: each pair's own CUDA source as its candidate (every metric
  must come out perfect: compiled, ran, I/O-correct, CodeBLEU 1.0, deviations
  about 0);
* ``perturbed``: the source with every store to an output parameter changed
  (``out[i] = e`` -> ``out[i] = km_perturb(e)``: e * 1.5 + 1, overloaded for
  the stored type), which compiles and runs but must be caught as an I/O error.

Written as `Sample` records with ``task_id`` = the pair id, as `generate`
writes decompiled candidates, so `evaluate` reads all three the same way.
"""

from __future__ import annotations

from pathlib import Path

from ...records import Pair, Sample, read_jsonl, write_jsonl
from .config import ConfigError, pair_config

KINDS = ("reference", "perturbed")


class NoStore(ValueError):
    pass


# overloads chosen by the stored value's type (float, __half, float4, int, ...), so a
# perturbation compiles whatever element or vector type the kernel stores
PERTURB_PRELUDE = """#include <cuda_fp16.h>
#include <cuda_bf16.h>
__device__ __forceinline__ float km_perturb(float v) { return v * 1.5f + 1.0f; }
__device__ __forceinline__ double km_perturb(double v) { return v * 1.5 + 1.0; }
__device__ __forceinline__ __half km_perturb(__half v) { return __float2half(__half2float(v) * 1.5f + 1.0f); }
__device__ __forceinline__ __nv_bfloat16 km_perturb(__nv_bfloat16 v) {
  return __float2bfloat16(__bfloat162float(v) * 1.5f + 1.0f);
}
__device__ __forceinline__ int km_perturb(int v) { return v * 3 + 1; }
__device__ __forceinline__ unsigned km_perturb(unsigned v) { return v * 3u + 1u; }
__device__ __forceinline__ long long km_perturb(long long v) { return v * 3 + 1; }
__device__ __forceinline__ bool km_perturb(bool v) { return !v; }
__device__ __forceinline__ float2 km_perturb(float2 v) { return make_float2(km_perturb(v.x), km_perturb(v.y)); }
__device__ __forceinline__ float4 km_perturb(float4 v) {
  return make_float4(km_perturb(v.x), km_perturb(v.y), km_perturb(v.z), km_perturb(v.w));
}
"""


def perturb(source: str, kernel: str, outputs) -> str:
    """`source` with the right side of every store to an output (names) of `kernel` wrapped in
    ``km_perturb(...)`` (x * 1.5 + 1 for floats, x * 3 + 1 for integers, per element of a vector)."""
    from ...cudasrc.tsparse import functions
    from .codebleu import _idents, _target

    fns = [f for f in functions(source) if f.name == kernel and f.is_kernel]
    if not fns:
        raise NoStore(f"no kernel {kernel!r}")
    data = source.encode()
    outputs = set(outputs)
    # pointers derived from an output (`float* row = out + blockIdx.x * n;`) store into it too
    stack = [fns[0].node]
    while stack:
        n = stack.pop()
        if n.type == "init_declarator" and n.child_by_field_name("declarator").type == "pointer_declarator":
            value = n.child_by_field_name("value")
            tgt = _target(n.child_by_field_name("declarator"))
            if value is not None and tgt is not None and outputs & {i.text.decode() for i in _idents(value)}:
                outputs.add(tgt.text.decode())
        stack.extend(n.children)
    edits = []
    stack = [fns[0].node]
    while stack:
        n = stack.pop()
        if n.type == "assignment_expression":
            left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
            tgt = _target(left)
            if left.type in ("subscript_expression", "pointer_expression") and tgt is not None \
                    and tgt.text.decode() in outputs:
                edits.append((right.start_byte, right.end_byte))
        stack.extend(n.children)
    if not edits:
        raise NoStore(f"no store to an output ({', '.join(sorted(outputs))}) in {kernel!r}")
    out, pos = [PERTURB_PRELUDE], 0
    for a, b in sorted(edits):
        if a < pos:
            continue  # nested in an edit already made
        out += [data[pos:a].decode(), f"km_perturb({data[a:b].decode()})"]
        pos = b
    return "".join(out) + data[pos:].decode()


def make_candidates(pairs_path: Path, out: Path, kind: str) -> tuple[int, dict[str, int]]:
    """Write one Sample per usable pair; (written, skipped by reason)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    samples, skipped = [], {}
    for p in read_jsonl(pairs_path, Pair):
        if not (p.source or "").strip() or p.source_language != "cuda":
            skipped["no CUDA source"] = skipped.get("no CUDA source", 0) + 1
            continue
        code = p.source
        if kind == "perturbed":
            try:
                cfg = pair_config(p)
                code = perturb(p.source, cfg.kernel, [q.name for q in cfg.outputs])
            except (ConfigError, NoStore) as exc:
                why = "no configuration" if isinstance(exc, ConfigError) else "no store to an output"
                skipped[why] = skipped.get(why, 0) + 1
                continue
        samples.append(Sample(f"{p.pair_id}#{kind}", p.pair_id, "cuda", code, model=f"kernelmill:{kind}",
                              meta={"sample_index": 0, "template": "ptx2cuda", "candidates": kind}))
    write_jsonl(out, samples)
    return len(samples), skipped

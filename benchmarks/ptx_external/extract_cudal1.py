"""Write the device code of CUDA-L1's `load_inline` kernels as standalone .cu files.

    python benchmarks/ptx_external/extract_cudal1.py ../shared/external/cuda-l1/kernels.jsonl \
        benchmarks/ptx_external/cudal1

Each candidate's `cuda_sources` strings (found statically, kernelmill.cudasrc; where that
fails, its string literals that define a `__global__`) go through
`device_unit`: what needs the torch/pybind headers is removed (host wrappers, bindings),
template kernels are instantiated from their launch sites. A unit is written only when it
still defines a `__global__` kernel; the comment at the top names its origin (CUDA-L1, MIT
licence: ../shared/external/cuda-l1/LICENSE). Units that fail nvcc are kept out by
benchmarks/ptx_external.py (reported as skipped), not here: this script needs no nvcc.
"""

from __future__ import annotations

import argparse
import ast
import json
from pathlib import Path

from kernelmill.cudasrc.device import device_unit
from kernelmill.cudasrc.python_src import CudaExtractError, cuda_sources_from_python


def literal_kernels(code: str) -> list[str]:
    """String literals of a candidate that define a kernel: the fallback where the source is
    passed indirectly (`cuda_sources=self.src`), to `load(...)` from a file, or to cupy."""
    return [n.value for n in ast.walk(ast.parse(code))
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and "__global__" in n.value]


def units(row: dict) -> list[tuple[str, str, list[str]]]:
    """(name, device source, notes) per CUDA source string of one candidate."""
    code, how = row["custom_code"], "cuda_sources"
    try:
        srcs = cuda_sources_from_python(code, row["id"]) if "load_inline" in code else []
    except (CudaExtractError, SyntaxError):
        srcs = []
    if not srcs:
        srcs, how = literal_kernels(code), "a string literal with __global__"
    out = []
    for i, src in enumerate(srcs):
        u = device_unit(src)
        notes = [f"dropped {k}: {why}" for k, why in u.dropped.items()]
        notes += [f"template {k} not instantiated: {why}" for k, why in u.unresolved.items()]
        live = [k for k in u.kernels if k.name not in u.dropped]
        if not live:
            notes.append("no kernel left without torch")
            u = None
        name = row["id"] + (f"_{i}" if len(srcs) > 1 else "")
        flags = " ".join(u.flags) if u else ""
        head = (f"// origin: CUDA-L1 ({row['id']}, KernelBench level {row['level']} task {row['task_id']}), "
                f"MIT licence; device code of {how}[{i}], torch host code removed\n"
                + (f"// nvcc flags: {flags}\n" if flags else ""))
        out.append((name, head + u.source if u else "", notes))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("jsonl", type=Path)
    ap.add_argument("out", type=Path)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for line in args.jsonl.read_text().splitlines():
        row = json.loads(line)
        for name, src, notes in units(row):
            if src:
                (args.out / f"{name}.cu").write_text(src)
            print(f"{'ok  ' if src else 'skip'} {name or row['id']}: {'; '.join(notes)[:200]}")


if __name__ == "__main__":
    main()

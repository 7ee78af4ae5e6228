"""Prove the device code of every CUDA candidate in the honest corpus compiles,
without a GPU and without torch headers.

Each `load_inline(..., cuda_sources=...)` string is found statically (a string
literal or a module-level string it names), its kernels are split from the
host code by kernelmill's `cuda_split.split_cuda_unit` (the kernel unit keeps
the includes, macros, types and device code, none of torch), and
`nvcc -arch=sm_90 -ptx` compiles that unit. Parsing torch/extension.h would
cost about a minute a file here; the host wrappers are ordinary torch C++ and
are left to the GPU run.

    python benchmarks/corpus/check_cuda.py [--arch sm_90] [--keep DIR]
"""

from __future__ import annotations

import argparse
import ast
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HONEST = Path(__file__).resolve().parent / "honest"
NVCC_FLAGS = ["--expt-relaxed-constexpr", "-D__CUDA_NO_HALF_OPERATORS__", "-D__CUDA_NO_HALF_CONVERSIONS__",
              "-D__CUDA_NO_BFLOAT16_CONVERSIONS__", "-D__CUDA_NO_HALF2_OPERATORS__", "-O3"]


def cuda_sources(code: str) -> list[str]:
    """Every cuda_sources string passed to load_inline in `code`."""
    tree = ast.parse(code)
    strings = {}
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
            strings[node.targets[0].id] = node.value.value
    out = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "load_inline"):
            continue
        for kw in node.keywords:
            if kw.arg != "cuda_sources":
                continue
            v = kw.value
            if isinstance(v, ast.Constant) and isinstance(v.value, str):
                out.append(v.value)
            elif isinstance(v, ast.Name) and v.id in strings:
                out.append(strings[v.id])
            else:
                raise ValueError(f"cuda_sources is not a string literal or a module-level string (line {v.lineno})")
    return out


def kernel_units(path: Path) -> list[str]:
    from kernelmill.verify.build.cuda_split import split_cuda_unit

    units = []
    for i, src in enumerate(cuda_sources(path.read_text(encoding="utf-8"))):
        split = split_cuda_unit(src)
        if split is None:
            raise ValueError(f"{path.name}: source {i}: its kernels cannot be split from the torch host code")
        units.append(split.kernel_unit)
    return units


def compile_unit(unit: str, where: Path, arch: str) -> tuple[bool, str]:
    src = where.with_suffix(".cu")
    src.write_text(unit, encoding="utf-8")
    proc = subprocess.run(["nvcc", f"-arch={arch}", "-ptx", *NVCC_FLAGS, str(src), "-o", str(where.with_suffix(".ptx"))],
                          capture_output=True, text=True)
    return proc.returncode == 0, proc.stderr


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--keep", type=Path, default=None, help="keep the .cu and .ptx files here")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    if shutil.which("nvcc") is None:
        print("nvcc not found", file=sys.stderr)
        return 2
    work = args.keep or Path(tempfile.mkdtemp(prefix="corpus-nvcc-"))
    work.mkdir(parents=True, exist_ok=True)
    jobs, failures = [], []
    for path in sorted(HONEST.glob("*.py")):
        if "language: cuda" not in path.read_text(encoding="utf-8").splitlines()[0]:
            continue
        try:
            units = kernel_units(path)
        except ValueError as exc:
            failures.append(str(exc))
            continue
        if not units:
            failures.append(f"{path.name}: no cuda_sources found")
        jobs += [(path.name, unit, work / f"{path.stem}_{i}") for i, unit in enumerate(units)]
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        results = list(pool.map(lambda j: (j[0], *compile_unit(j[1], j[2], args.arch)), jobs))
    for name, ok, log in results:
        print(f"{'ok  ' if ok else 'FAIL'} {name}")
        if not ok:
            failures.append(f"{name}:\n{log}")
    kernels = sum(ok for _, ok, _ in results)
    print(f"{kernels} of {len(results)} kernel units compiled to PTX ({args.arch}); {len(failures)} problems")
    for f in failures:
        print(f, file=sys.stderr)
    if args.keep is None:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

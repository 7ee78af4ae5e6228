"""Compile the CUDA code of the builtin CUDA candidates with nvcc, no GPU needed.

Each candidate's ``cuda_sources`` string (found statically: the argument of
its ``load_inline`` call, or the module-level string it names) is compiled to
an object file with the flags ``load_inline`` uses. Candidates whose file
name promises ``compile_error`` must fail; all others must compile.

Parsing torch/extension.h dominates nvcc's time (about a minute a file on a
2-core machine), so by default the sources expected to compile go into ONE
translation unit: their ``#include`` lines are hoisted, each body is wrapped
in its own namespace, and a ``#line`` directive makes any error point at the
candidate file it came from. ``--separate`` compiles each file on its own.

    python -m kernelmill.tasks.builtin.nvcc_check [--arch sm_90] [--separate] [--jobs N]
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ...cudasrc.inline_calls import inline_calls
from ...records import Sample

# what torch.utils.cpp_extension passes to nvcc for load_inline builds
NVCC_FLAGS = ["--expt-relaxed-constexpr", "-D__CUDA_NO_HALF_OPERATORS__",
              "-D__CUDA_NO_HALF_CONVERSIONS__", "-D__CUDA_NO_BFLOAT16_CONVERSIONS__",
              "-D__CUDA_NO_HALF2_OPERATORS__", "-DTORCH_EXTENSION_NAME=kernelmill_nvcc_check",
              "-diag-suppress=3306"]
_INCLUDE = re.compile(r"^\s*#\s*include\s*[<\"].*[>\"]\s*$")


@dataclass
class CudaSource:
    sample_id: str
    path: str
    expect: str
    code: str
    functions: list[str]


@dataclass
class CompileResult:
    sample_ids: list[str]
    ok: bool
    seconds: float
    log: str


def extract_cuda_source(code: str, where: str) -> tuple[str, list[str]]:
    """The string passed as ``cuda_sources=`` and the ``functions=`` names."""
    tree = ast.parse(code, filename=where)
    strings = {t.id: n.value.value for n in tree.body if isinstance(n, ast.Assign)
               for t in n.targets if isinstance(t, ast.Name)
               and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)}
    for found in inline_calls(tree):
        src = found.arguments.get("cuda_sources")
        if isinstance(src, ast.Constant) and isinstance(src.value, str):
            text = src.value
        elif isinstance(src, ast.Name) and src.id in strings:
            text = strings[src.id]
        else:
            raise ValueError(f"{where}: load_inline has no literal cuda_sources (or a name bound to one)")
        funcs = found.arguments.get("functions")
        names = [e.value for e in funcs.elts] if isinstance(funcs, (ast.List, ast.Tuple)) else []
        return text, names
    raise ValueError(f"{where}: no load_inline(...) call")


def collect(samples: list[Sample]) -> list[CudaSource]:
    out = []
    for s in samples:
        code, funcs = extract_cuda_source(s.code, s.meta.get("path", s.sample_id))
        missing = [f for f in funcs if not re.search(rf"\b{re.escape(f)}\s*\(", code)]
        if missing:
            raise ValueError(f"{s.meta.get('path')}: functions {missing} are not defined in cuda_sources")
        out.append(CudaSource(s.sample_id, s.meta.get("path", ""), s.meta["expect"], code, funcs))
    return out


def cxx_standard() -> str:
    """The C++ standard this torch's cpp_extension builds with (c++20 from torch 2.12 or so)."""
    import inspect

    import torch.utils.cpp_extension as ext

    return "-std=c++20" if "'-std=c++20'" in inspect.getsource(ext) else "-std=c++17"


def include_flags(workdir: Path) -> list[str]:
    from torch.utils.cpp_extension import include_paths

    dirs = list(include_paths()) + [sysconfig.get_paths()["include"]]  # Python.h, via torch/extension.h
    torch_include = Path(include_paths()[0])
    if not (torch_include / "c10/cuda/impl/cuda_cmake_macros.h").exists():
        # CPU-only torch wheels ship c10/cuda headers but not this file, which
        # a CUDA build generates from cuda_cmake_macros.h.in; recreate it
        shim = workdir / "shim" / "c10" / "cuda" / "impl"
        shim.mkdir(parents=True, exist_ok=True)
        (shim / "cuda_cmake_macros.h").write_text("#pragma once\n#define C10_CUDA_BUILD_SHARED_LIBS\n")
        dirs.append(str(workdir / "shim"))
    return [f"-I{d}" for d in dirs]


def combine(sources: list[CudaSource]) -> str:
    """One translation unit: hoisted includes, one namespace per candidate."""
    includes: list[str] = []
    bodies = []
    for i, src in enumerate(sources):
        kept = []
        for line in src.code.splitlines():
            if _INCLUDE.match(line):
                if line.strip() not in includes:
                    includes.append(line.strip())
                kept.append("")  # keep line numbers aligned for #line
            else:
                kept.append(line)
        bodies.append(f'namespace kernelmill_candidate_{i} {{\n#line 1 "{_label(src)}"\n'
                      + "\n".join(kept) + f"\n}}  // namespace kernelmill_candidate_{i}\n")
    return "\n".join(includes) + "\n\n" + "\n".join(bodies)


def _label(src: CudaSource) -> str:
    return f"{src.path or src.sample_id}:cuda_sources"


def _with_line(src: CudaSource) -> str:
    return f'#line 1 "{_label(src)}"\n' + src.code


def error_in_candidate(src: CudaSource, log: str) -> bool:
    """True when nvcc reported an error inside the candidate's own code (not
    in a header it includes), so a compile_error candidate fails for its bug."""
    return any(_label(src) in line and "error" in line for line in log.splitlines())


def nvcc_compile(text: str, workdir: Path, name: str, arch: str, nvcc: str) -> tuple[bool, float, str]:
    src = workdir / f"{name}.cu"
    src.write_text(text)
    cmd = [nvcc, "-c", f"-arch={arch}", cxx_standard(), *NVCC_FLAGS, *include_flags(workdir), str(src),
           "-o", str(workdir / f"{name}.o")]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    return proc.returncode == 0, time.perf_counter() - t0, (proc.stdout + proc.stderr)


def run_checks(sources: list[CudaSource], arch: str = "sm_90", separate: bool = False,
               jobs: int | None = None, nvcc: str | None = None) -> list[CompileResult]:
    nvcc = nvcc or shutil.which("nvcc") or ""
    if not nvcc:
        raise RuntimeError("nvcc not found on PATH (install the CUDA toolkit or pass --nvcc)")
    must_compile = [s for s in sources if s.expect != "compile_error"]
    must_fail = [s for s in sources if s.expect == "compile_error"]
    units: list[tuple[list[CudaSource], str]] = []
    if separate:
        units += [([s], _with_line(s)) for s in must_compile]
    elif must_compile:
        units.append((must_compile, combine(must_compile)))
    units += [([s], _with_line(s)) for s in must_fail]
    with tempfile.TemporaryDirectory(prefix="kernelmill-nvcc-") as tmp:
        def work(item):
            idx, (group, text) = item
            ok, secs, log = nvcc_compile(text, Path(tmp), f"unit{idx}", arch, nvcc)
            return CompileResult([s.sample_id for s in group], ok, secs, log)

        with ThreadPoolExecutor(max_workers=jobs or max(1, os.cpu_count() or 1)) as pool:
            return list(pool.map(work, enumerate(units)))


def judge(sources: list[CudaSource], results: list[CompileResult]) -> list[tuple[str, bool, str]]:
    """(sample_id, as_expected, what happened) for every candidate."""
    by_id = {s.sample_id: s for s in sources}
    out = []
    for res in results:
        for sid in res.sample_ids:
            src = by_id[sid]
            if src.expect == "compile_error":
                good = not res.ok and error_in_candidate(src, res.log)
                what = ("failed in its own code" if good else
                        "compiled" if res.ok else "failed, but not in the candidate's code")
            else:
                good, what = res.ok, "compiled" if res.ok else "failed to compile"
            out.append((sid, good, f"{what} ({res.seconds:.0f}s, {len(res.sample_ids)} in unit)"))
    return out


def main(argv: list[str] | None = None) -> int:
    from . import builtin_samples

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--separate", action="store_true", help="one nvcc run per candidate")
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--nvcc", default=None)
    args = parser.parse_args(argv)
    sources = collect(builtin_samples(["cuda"]))
    expect = {s.sample_id: s.expect for s in sources}
    t0 = time.perf_counter()
    results = run_checks(sources, args.arch, args.separate, args.jobs, args.nvcc)
    verdicts = judge(sources, results)
    for sid, good, what in verdicts:
        print(f"{'ok ' if good else 'BAD'} {sid:55s} expect={expect[sid]:13s} {what}")
    for res in results:
        if not res.ok:
            errors = [ln for ln in res.log.splitlines() if "error" in ln]
            print(f"  nvcc errors for {', '.join(res.sample_ids)}:\n      "
                  + "\n      ".join(errors[:5] or res.log.splitlines()[-5:]))
    failures = sum(not good for _, good, _ in verdicts)
    print(f"{len(sources)} CUDA candidates, {failures} unexpected result(s), {time.perf_counter() - t0:.0f}s total")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

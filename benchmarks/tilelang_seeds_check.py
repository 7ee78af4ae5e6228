"""Compile every TileLang seed candidate for the task's full-size shapes.

Each seed (``candidates/<level>/<task>/tilelang__ok*.py``) lists the kernels it
builds as ``CHECK = [(factory, kwargs), ...]``; a factory takes ``target=`` and
returns a compiled ``tilelang.JITKernel``. This script imports each seed, calls
every factory and reports per kernel: lowered (CUDA source made), nvcc (a cubin
made), compile seconds.

    python benchmarks/tilelang_seeds_check.py --cpu            # no GPU: target sm_90a (H100's, as TileLang names it)
    python benchmarks/tilelang_seeds_check.py --out compile.jsonl   # on a GPU: the GPU's own target

Where TileLang finds nvcc (CUDA_HOME or PATH) the compile includes nvcc making the
cubin; without it TileLang 0.1.15 still lowers the kernel and returns its CUDA
source, so the check then proves the lowering only (each row's ``nvcc`` says
which). Exit status 1 if any kernel failed.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CANDIDATES = ROOT / "src" / "kernelmill" / "tasks" / "builtin" / "candidates"
CPU_TARGET = {"kind": "cuda", "arch": "sm_90a"}


def seed_files(pattern: str = "tilelang__ok*.py") -> list[Path]:
    return sorted(CANDIDATES.glob(f"level*/*/{pattern}"))


def load(path: Path):
    name = "tl_seed_" + "_".join(path.relative_to(CANDIDATES).with_suffix("").parts)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def check_one(path: Path, target) -> list[dict]:
    task = "/".join(path.relative_to(CANDIDATES).parts[:2])
    rows = []
    try:
        mod = load(path)
        checks = getattr(mod, "CHECK")
    except Exception as exc:  # noqa: BLE001 - reported per file
        return [{"task": task, "file": str(path.relative_to(ROOT)), "kernel": None, "ok": False,
                 "error": f"import: {exc!r}"}]
    for factory, kwargs in checks:
        row = {"task": task, "file": str(path.relative_to(ROOT)), "kernel": factory.__name__, "args": kwargs,
               "nvcc": shutil.which("nvcc") is not None or bool(os.environ.get("CUDA_HOME"))}
        t0 = time.perf_counter()
        try:
            kernel = factory(**kwargs, target=target)
            src = kernel.get_kernel_source()
            row.update(ok="__global__" in src, compile_s=round(time.perf_counter() - t0, 2), source_chars=len(src))
        except Exception as exc:  # noqa: BLE001
            row.update(ok=False, compile_s=round(time.perf_counter() - t0, 2),
                       error="".join(traceback.format_exception_only(exc))[-1500:])
        rows.append(row)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cpu", action="store_true", help="no GPU: compile for sm_90a (else: the GPU's target)")
    ap.add_argument("--only", default="", help="substring of the task path to check (e.g. level2/)")
    ap.add_argument("--part", default="1/1", help="K/N: only the seed files whose index (in sorted order) is K-1 mod N")
    ap.add_argument("--tasks", default="", help="comma-separated task ids (level1/13_TransposedMatmul,...): only these seeds")
    ap.add_argument("--out", default="", help="write one JSON line per kernel here")
    ap.add_argument("--fresh-cache", action="store_true",
                    help="compile into an empty TILELANG_CACHE_DIR, so every time is a cold compile")
    args = ap.parse_args()
    if args.fresh_cache:
        os.environ["TILELANG_CACHE_DIR"] = tempfile.mkdtemp(prefix="tl-cache-")
    target = CPU_TARGET if args.cpu else None
    rows = []
    out = open(args.out, "w") if args.out else None  # one line per kernel as it is done (a cut run keeps them)
    k, n = (int(x) for x in args.part.split("/"))
    wanted = {t.strip() for t in args.tasks.split(",") if t.strip()}
    for i, path in enumerate(seed_files()):
        if (args.only and args.only not in str(path)) or i % n != k - 1:
            continue
        if wanted and "/".join(path.relative_to(CANDIDATES).parts[:2]) not in wanted:
            continue
        for row in check_one(path, target):
            rows.append(row)
            if out:
                out.write(json.dumps(row) + "\n")
                out.flush()
            status = "ok  " if row["ok"] else "FAIL"
            print(f"{status} {row['task']:<42} {row.get('kernel') or '-':<28} {row.get('compile_s', 0):>6.1f} s"
                  + ("" if row["ok"] else "\n     " + row.get("error", "").strip().replace("\n", "\n     ")[-800:]),
                  flush=True)
    if out:
        out.close()
    bad = [r for r in rows if not r["ok"]]
    tasks = {r["task"] for r in rows}
    print(f"{len(rows) - len(bad)}/{len(rows)} kernels compiled, {len(tasks)} tasks, "
          f"{sum(r.get('compile_s', 0) for r in rows):.1f} s in all")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

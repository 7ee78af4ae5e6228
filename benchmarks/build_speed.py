"""Build time of the builtin suite's CUDA candidates: torch's load_inline vs kernelmill's cached builder.

Each measurement is a fresh Python process importing one candidate (which calls
load_inline); we time that import (the build) and report per candidate:

* stock_cold: torch's load_inline, empty TORCH_EXTENSIONS_DIR;
* stock_warm: the same again (torch's own reuse of its build folder);
* ours_cold:  the cached builder, a source never built before. Before the
              first candidate the benchmark builds the precompiled torch headers
              for the flag sets the candidates use, as a verification run does at its start (verify/build_prepare.py;
              timed separately as ours_pch_prepare_s, once per machine and
              torch version, kept across runs); --no-prepare leaves them to the
              lazy path (built by the third candidate, which waits for them);
* ours_warm:  the same source again in a new process (no compile at all).

Both compile only for the GPU present (TORCH_CUDA_ARCH_LIST from the device).
Run on the GPU machine:  python benchmarks/build_speed.py --out build_speed.json
(``--cpp`` measures the C++ CPU candidates instead; runs anywhere.)
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CANDIDATES = ROOT / "src/kernelmill/tasks/builtin/candidates"

PROG = r'''
import importlib.util, json, sys, time
mode, path, cache = sys.argv[1], sys.argv[2], sys.argv[3]
import torch
if mode == "ours":
    from kernelmill.verify import inline_build
    inline_build.install(cache)
t = time.perf_counter()
err = None
try:
    spec = importlib.util.spec_from_file_location("candidate", path)
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
except Exception as exc:
    err = str(exc)[-300:]
out = {"build_s": time.perf_counter() - t, "error": err}
if mode == "ours":
    out["log"] = inline_build.builder_log()
print(json.dumps(out))
'''


def measure(mode: str, path: str, cache: str, env: dict) -> dict:
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-c", PROG, mode, path, cache], capture_output=True, text=True,
                         env=env, timeout=1800)
    try:
        out = json.loads(res.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        out = {"build_s": None, "error": res.stderr[-500:]}
    out["process_s"] = time.perf_counter() - t0
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cpp", action="store_true", help="C++ CPU candidates instead of CUDA ones")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--skip-stock", action="store_true")
    ap.add_argument("--no-prepare", action="store_true", help="do not build the precompiled headers first")
    ap.add_argument("--out", default="build_speed.json")
    args = ap.parse_args()
    lang = "cpp" if args.cpp else "cuda"
    files = sorted(glob.glob(str(CANDIDATES / f"*/*/{lang}__*.py")))
    files = [f for f in files if "compile_error" not in f][: args.limit or None]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    if not args.cpp and "TORCH_CUDA_ARCH_LIST" not in env:
        import torch

        major, minor = torch.cuda.get_device_capability()
        env["TORCH_CUDA_ARCH_LIST"] = f"{major}.{minor}"
    work = Path(tempfile.mkdtemp(prefix="km-buildspeed-"))
    ours_cache = str(work / "ours")
    rows = []
    prepare = None
    if not args.no_prepare:
        t0 = time.perf_counter()
        sys.path.insert(0, str(ROOT / "src"))
        from kernelmill.verify.build_prepare import run_specs

        # the flag sets these candidates use, read from their source as a verification run does
        specs = run_specs([Path(f).read_text() for f in files], min_uses=1)
        res = subprocess.run([sys.executable, "-m", "kernelmill.verify.build_prepare", ours_cache,
                              "--specs", json.dumps(specs)], capture_output=True, text=True, env=env)
        prepare = {"seconds": round(time.perf_counter() - t0, 2), "out": (res.stdout + res.stderr)[-500:]}
        print(json.dumps({"ours_pch_prepare": prepare}), flush=True)
    for f in files:
        name = "/".join(Path(f).parts[-3:])
        row = {"candidate": name}
        if not args.skip_stock:
            ext = work / ("stock-" + Path(f).stem + "-" + Path(f).parent.name)
            e = {**env, "TORCH_EXTENSIONS_DIR": str(ext)}
            row["stock_cold"] = measure("stock", f, "", e)
            row["stock_warm"] = measure("stock", f, "", e)
        row["ours_cold"] = measure("ours", f, ours_cache, env)
        row["ours_warm"] = measure("ours", f, ours_cache, env)
        rows.append(row)
        print(json.dumps({k: (v if isinstance(v, str) else {kk: vv for kk, vv in v.items() if kk != "log"})
                          for k, v in row.items()}), flush=True)

    def med(key: str, field: str = "build_s"):
        vals = [r[key][field] for r in rows if key in r and r[key].get(field) is not None and not r[key].get("error")]
        return round(statistics.median(vals), 3) if vals else None

    summary = {k: {"median_build_s": med(k), "median_process_s": med(k, "process_s")}
               for k in ("stock_cold", "stock_warm", "ours_cold", "ours_warm")}
    if summary["stock_cold"]["median_build_s"] and summary["ours_cold"]["median_build_s"]:
        summary["speedup_cold"] = round(summary["stock_cold"]["median_build_s"] / summary["ours_cold"]["median_build_s"], 1)
    summary["ours_pch_prepare_s"] = prepare and prepare["seconds"]
    summary["split"] = sum(bool(r["ours_cold"].get("log", {}).get("cuda_split")) for r in rows)
    summary["n"] = len(rows)
    print(json.dumps(summary, indent=1))
    Path(args.out).write_text(json.dumps({"summary": summary, "rows": rows}, indent=1))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

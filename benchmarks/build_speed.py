"""Build time of the builtin suite's CUDA candidates: torch's load_inline vs kernelmill's cached builder.

Each measurement is a fresh Python process importing one candidate (which calls
load_inline); we time that import (the build) and report per candidate:

* stock_cold: torch's load_inline, empty TORCH_EXTENSIONS_DIR;
* stock_warm: the same again (torch's own reuse of its build folder);
* ours_cold:  the cached builder, a source never built before. Before the
              first candidate the benchmark builds the precompiled torch headers
              for the flag sets the candidates use, as a verification run does at its start (verify/build/build_prepare.py;
              with C++ candidates also the slim path's binding objects for their signature lists;
              timed separately as ours_pch_prepare_s, once per machine and
              torch version, kept across runs); --no-prepare leaves them to the
              lazy path (built by the third candidate, which waits for them);
* ours_warm:  the same source again in a new process (no compile at all).

Both compile only for the GPU present (TORCH_CUDA_ARCH_LIST from the device).
Run on the GPU machine:  python benchmarks/build_speed.py --out build_speed.json
(``--cpp`` measures the C++ CPU candidates instead; runs anywhere.)

The LLM-style corpus (issue 14): ``--corpus benchmarks/corpus_llm/candidates`` takes its
CUDA candidates that build at import (module-level ``load_inline``). ``--merge both``
measures the cached builder twice, with the binding and host units merged where provable
(verify/build/unit_merge.py) and always apart, each in its own cache (the precompiled headers
copied over, built once). ``--parallel N`` adds a batch pass per mode: every candidate's
cold build at once, N processes at a time, as a verification run's build workers do;
its wall and the median build under that load are reported. ``--stock-limit K`` measures
torch's own load_inline on the first K candidates only (it takes 30-90 s each);
``--alone-limit K`` the one-at-a-time pass on the first K (``--warm-limit K``: the warm
measurement on the first K only). ``--slim both`` measures the cached builder with an
extension's own C++ code (a CUDA extension's host code) compiled against torch/types.h and
its binding shared per signature list (verify/build/slim_units.py; the default) and without
(`noslim_*`); a candidate's `sigbind` says whether its binding object was compiled (the
first of its signature list) or reused. Each row also says where the build's time went
(`unit_s` per unit, `link_s`; inline_build.InlineBuilder.times). ``--link both`` also
measures the cached builder linking against torch's real libraries (`torchlink_*`) beside
the default, which names them through stubs (verify/build/link_stubs.py). ``--cpu-emulate
CUDA_HOME`` builds the CUDA candidates on a machine without a GPU against a CPU torch (the
build paths checked; torch's load_inline skipped, it cannot link there).

    python benchmarks/build_speed.py --corpus benchmarks/corpus_llm/candidates --merge both \
        --parallel 16 --alone-limit 12 --stock-limit 3 --out build_merge.json
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
import os, torch
if os.environ.get("KM_EMULATE_CUDA_HOME"):  # --cpu-emulate: a CPU torch builds CUDA extensions (not run)
    import torch.utils.cpp_extension as ce
    ce.CUDA_HOME = os.environ["KM_EMULATE_CUDA_HOME"]
if mode.startswith("ours"):
    from kernelmill.verify.build import inline_build
    if os.environ.get("KM_EMULATE_CUDA_HOME"):
        _flags = inline_build.torch_flags
        def _cpu_flags(*a, **k):
            f = _flags(*a, **k)
            f["ldflags"] = [x for x in f["ldflags"] if x not in ("-lc10_cuda", "-ltorch_cuda")]  # a CPU torch has none
            return f
        inline_build.torch_flags = _cpu_flags
    inline_build.install(cache, merge=mode != "ours-apart", slim=mode != "ours-noslim",
                         stub_link=mode != "ours-torchlink")
t = time.perf_counter()
err = None
try:
    spec = importlib.util.spec_from_file_location("candidate", path)
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
except Exception as exc:
    err = str(exc)[-300:]
out = {"build_s": time.perf_counter() - t, "error": err}
if mode.startswith("ours"):
    out["log"] = {**inline_build.builder_log(), **inline_build.builder_times()}
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


def corpus_files(folder: str, limit: int) -> list[str]:
    """The corpus's CUDA candidates whose import builds (module-level load_inline, no deliberate failure)."""
    out = []
    for f in sorted(glob.glob(os.path.join(folder, "*.py"))):
        head = Path(f).read_text().splitlines()[:3]
        if "language: cuda" in head[0] and "module-level" in head[1] and "expect: ok" in head[2]:
            out.append(f)
    return out[: limit or None]


def batch(mode: str, files: list[str], cache: str, env: dict, parallel: int) -> dict:
    """Every file's cold build at once, `parallel` processes at a time."""
    from concurrent.futures import ThreadPoolExecutor

    t0 = time.perf_counter()
    with ThreadPoolExecutor(parallel) as pool:
        rows = list(pool.map(lambda f: measure(mode, f, cache, env), files))
    builds = [r["build_s"] for r in rows if r.get("build_s") is not None and not r.get("error")]
    return {"wall_s": round(time.perf_counter() - t0, 2), "n": len(files), "ok": len(builds),
            "median_build_s": round(statistics.median(builds), 2) if builds else None,
            "max_build_s": round(max(builds), 2) if builds else None,
            "merged": sum(bool(r.get("log", {}).get("merged")) for r in rows),
            "errors": [r["error"][-200:] for r in rows if r.get("error")][:3]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cpp", action="store_true", help="C++ CPU candidates instead of CUDA ones")
    ap.add_argument("--corpus", default=None, help="a folder of LLM-style candidates (benchmarks/corpus_llm/"
                                                   "candidates): its module-level CUDA ones")
    ap.add_argument("--merge", choices=["on", "off", "both"], default="on",
                    help="the cached builder with unit merging on, off, or both (each in its own cache)")
    ap.add_argument("--slim", choices=["on", "off", "both"], default="on",
                    help="the cached builder with slim units (C++ extensions: slim_units.py) on, off, or both")
    ap.add_argument("--link", choices=["stubs", "torch", "both"], default="stubs",
                    help="link against stubs of torch's libraries (verify/build/link_stubs.py; the default), torch's "
                         "real libraries, or both (each in its own cache)")
    ap.add_argument("--parallel", type=int, default=0, help="also a batch pass per mode, N builds at a time")
    ap.add_argument("--stock-limit", type=int, default=0, help="torch's load_inline on the first K candidates only")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--alone-limit", type=int, default=0,
                    help="the one-at-a-time pass on the first K candidates only (the batch pass takes all)")
    ap.add_argument("--warm-limit", type=int, default=0,
                    help="the warm measurement (the same source again, a new process) on the first K only")
    ap.add_argument("--skip-stock", action="store_true")
    ap.add_argument("--no-prepare", action="store_true", help="do not build the precompiled headers first")
    ap.add_argument("--cpu-emulate", metavar="CUDA_HOME", default=None,
                    help="no GPU here: build the CUDA candidates against this CPU torch with the CUDA toolkit at "
                         "CUDA_HOME (sm_90; torch's CUDA libraries left out of the link), to check the build "
                         "paths; torch's load_inline is skipped (it cannot link); timings are this machine's")
    ap.add_argument("--work", help="keep the caches in this folder (default: a temporary one, removed)")
    ap.add_argument("--out", default="build_speed.json")
    args = ap.parse_args()
    lang = "cpp" if args.cpp else "cuda"
    if args.corpus:
        files = corpus_files(args.corpus, args.limit)
    else:
        files = sorted(glob.glob(str(CANDIDATES / f"*/*/{lang}__*.py")))
        files = [f for f in files if "compile_error" not in f][: args.limit or None]
    modes = {"on": ["ours"], "off": ["ours-apart"], "both": ["ours", "ours-apart"]}[args.merge]
    modes += {"on": [], "off": ["ours-noslim"], "both": ["ours-noslim"]}[args.slim]
    if args.slim == "off":
        modes = [m for m in modes if m != "ours"] or ["ours-noslim"]
    if args.link != "stubs":
        modes += ["ours-torchlink"]
        if args.link == "torch":
            modes = [m for m in modes if m != "ours"]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    if args.cpu_emulate:
        env.update(KM_EMULATE_CUDA_HOME=args.cpu_emulate, TORCH_CUDA_ARCH_LIST="9.0")
        args.skip_stock = True
        import torch.utils.cpp_extension as ce

        ce.CUDA_HOME = args.cpu_emulate  # for reading the flag sets below, in this process
    if not args.cpp and "TORCH_CUDA_ARCH_LIST" not in env:
        import torch

        major, minor = torch.cuda.get_device_capability()
        env["TORCH_CUDA_ARCH_LIST"] = f"{major}.{minor}"
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="km-buildspeed-"))
    ours_cache = str(work / "ours")
    rows = []
    prepare = None
    if not args.no_prepare:
        t0 = time.perf_counter()
        sys.path.insert(0, str(ROOT / "src"))
        from kernelmill.verify.build.build_prepare import binding_specs, run_specs

        # the flag sets these candidates use, read from their source as a verification run does,
        # and (C++) the slim path's binding objects for their signature lists (verify/build/slim_units.py)
        specs = run_specs([Path(f).read_text() for f in files], min_uses=1)
        bindings = [b for f in files for b in binding_specs(Path(f).read_text())]
        extra = []
        if bindings and "ours" in modes:
            Path(ours_cache).mkdir(parents=True, exist_ok=True)
            (Path(ours_cache) / "bindings.json").write_text(json.dumps(bindings))
            extra = ["--bindings", str(Path(ours_cache) / "bindings.json")]
        entry = (["-c", "import os, sys, torch.utils.cpp_extension as ce; ce.CUDA_HOME = os.environ["
                        "'KM_EMULATE_CUDA_HOME']; from kernelmill.verify.build import build_prepare; build_prepare.main()"]
                 if args.cpu_emulate else ["-m", "kernelmill.verify.build.build_prepare"])
        res = subprocess.run([sys.executable, *entry, ours_cache,
                              "--specs", json.dumps(specs), *extra], capture_output=True, text=True, env=env)
        prepare = {"seconds": round(time.perf_counter() - t0, 2), "out": (res.stdout + res.stderr)[-500:]}
        print(json.dumps({"ours_pch_prepare": prepare}), flush=True)
    def fresh_cache(folder: str) -> str:
        """An empty cache but for what the preparation made: the precompiled headers and the
        binding objects (copied, not rebuilt)."""
        for kind in ("pch", "obj"):
            if os.path.isdir(os.path.join(ours_cache, kind)):
                shutil.copytree(os.path.join(ours_cache, kind), os.path.join(folder, kind))
        return folder

    caches = {m: ours_cache if i == 0 else fresh_cache(str(work / m)) for i, m in enumerate(modes)}
    batches = {}
    if args.parallel:
        for m in modes:  # before the one-at-a-time pass: every build here is cold
            batches[m] = batch(m, files, fresh_cache(str(work / f"batch-{m}")), env, args.parallel)
            print(json.dumps({"batch": m, **batches[m]}), flush=True)
    for i, f in enumerate(files[: args.alone_limit or None]):
        name = "/".join(Path(f).parts[-3:])
        row = {"candidate": name}
        if not args.skip_stock and (not args.stock_limit or i < args.stock_limit):
            ext = work / ("stock-" + Path(f).stem + "-" + Path(f).parent.name)
            e = {**env, "TORCH_EXTENSIONS_DIR": str(ext)}
            row["stock_cold"] = measure("stock", f, "", e)
            row["stock_warm"] = measure("stock", f, "", e)
        for m in modes:
            key = {"ours": "ours", "ours-apart": "apart", "ours-noslim": "noslim", "ours-torchlink": "torchlink"}[m]
            row[f"{key}_cold"] = measure(m, f, caches[m], env)
            if not args.warm_limit or i < args.warm_limit:
                row[f"{key}_warm"] = measure(m, f, caches[m], env)
        rows.append(row)
        print(json.dumps({k: (v if isinstance(v, str) else {
            **{kk: (round(vv, 3) if isinstance(vv, float) else vv) for kk, vv in v.items() if kk != "log"},
            **{kk: v["log"][kk] for kk in ("slim", "merged", "link_stubs", "compiled", "flags_s", "compile_s", "unit_s", "link_s",
                                            "call_build_s", "call_import_s") if kk in v.get("log", {})}})
            for k, v in row.items()}), flush=True)

    def med(key: str, field: str = "build_s"):
        vals = [r[key][field] for r in rows if key in r and r[key].get(field) is not None and not r[key].get("error")]
        return round(statistics.median(vals), 3) if vals else None

    summary = {k: {"median_build_s": med(k), "median_process_s": med(k, "process_s")}
               for k in ("stock_cold", "stock_warm", "ours_cold", "ours_warm", "apart_cold", "apart_warm",
                         "noslim_cold", "noslim_warm", "torchlink_cold", "torchlink_warm")
               if any(k in r for r in rows)}
    if summary.get("stock_cold", {}).get("median_build_s"):
        for k in ("ours_cold", "apart_cold", "noslim_cold", "torchlink_cold"):
            if summary.get(k, {}).get("median_build_s"):
                # the same candidates on both sides: those stock was measured on
                same = [r for r in rows if "stock_cold" in r and not r["stock_cold"].get("error") and not r[k].get("error")]
                if same:
                    ratio = statistics.median(r["stock_cold"]["build_s"] / r[k]["build_s"] for r in same)
                    summary[f"stock_over_{k}"] = round(ratio, 1)
    summary["batches"] = batches
    summary["slim"] = sum(bool(r.get("ours_cold", {}).get("log", {}).get("slim")) for r in rows)
    summary["sigbind_compiled"] = sum("sigbind" in r.get("ours_cold", {}).get("log", {}).get("compiled", []) for r in rows)
    summary["merged"] = sum(bool(r.get("ours_cold", {}).get("log", {}).get("merged")) for r in rows)
    summary["ours_pch_prepare_s"] = prepare and prepare["seconds"]
    summary["split"] = sum(bool(r.get("ours_cold", r.get("apart_cold", {})).get("log", {}).get("cuda_split")) for r in rows)
    summary["n"] = len(rows)
    print(json.dumps(summary, indent=1))
    Path(args.out).write_text(json.dumps({"summary": summary, "rows": rows}, indent=1))
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

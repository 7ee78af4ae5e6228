"""Issue 40, target 2: how fast a failing ``load_inline`` build fails, how fast a good one builds.

Takes the ``load_inline`` calls of an external corpus of LLM-written candidates
(default: ../shared/external/cuda-l1/kernels.jsonl, field ``custom_code``): the calls an
import runs (recorded by a stand-in ``load_inline`` while the candidate is imported in a
child process) and the lazy ones (in ``__init__``, ``forward``, helpers; their arguments
computed as the build phase does, verify/build/lazy_builds.py). Each distinct call is then
built twice, each time in a fresh Python process with a cold cache:

* ``ours``: kernelmill's builder (verify/build/inline_build.py ``load_inline``: the cached
  units, and the fail-fast checks of verify/build/fail_fast.py), after the precompiled headers
  and binding objects for the corpus's flag sets were made ahead, as a verification run does
  at its start (timed apart: ``prepare_s``);
* ``stock``: torch's own ``load_inline`` of the same arguments, an empty TORCH_EXTENSIONS_DIR.

Per call: the outcome (``ok``: built; ``compile_error``: the build raised torch's
"Error building extension"; ``other``: anything else) and the seconds to it. The summary
gives, over the calls that fail, the median and max time to the compile error (the moment
the candidate's own fallback can take over), and over those that build, the median cold
build beside torch's. ``--before`` measures the builder with the fail-fast checks off (the
code before issue 40) on the calls that fail.

Without a GPU (``--cpu-emulate CUDA_HOME``, a CPU build of torch): both sides build for
sm_90 against the CPU torch's headers, torch's CUDA libraries left out of the link (a CPU
torch has none); a built CUDA extension then cannot be imported here, which counts as
built. On the GPU machine (nothing emulated)::

    python benchmarks/build_fail_fast.py --out build_fail_fast_gpu.json

Here (2 cores, no GPU)::

    python benchmarks/build_fail_fast.py --cpu-emulate /usr/local/cuda --out build_fail_fast_cpu.json

``--cold`` leaves the preparation out: each build starts from an empty cache, as the first
builds on a fresh machine do (the precompiled header and the header's identifiers not made yet).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared/external/cuda-l1/kernels.jsonl"

EXTRACT = r'''
import inspect, json, sys, types
import torch.utils.cpp_extension as ce
from kernelmill.verify.build import inline_build, lazy_builds
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
sig = inspect.signature(inline_build.build_only)


class Anything:
    def __getattr__(self, name):
        return lambda *a, **k: None


def plain(v):
    return v if isinstance(v, (str, int, float, bool, type(None), list, dict)) else repr(v)


out = []
for r in rows:
    code = r.get("custom_code") or r.get("code") or ""
    if "load_inline" not in code:
        continue
    found = []

    def record(*a, **k):
        found.append(("import", dict(sig.bind(*a, **k).arguments)))
        return Anything()

    ce.load_inline = record
    mod = types.ModuleType("candidate")
    try:
        exec(compile(code, "<candidate>", "exec"), mod.__dict__)
    except BaseException as exc:  # the candidate's own import error: its module-level calls are what was recorded
        pass
    for call in lazy_builds.lazy_calls(code):
        try:
            for kw in lazy_builds.call_argument_sets(call, vars(mod), sig):
                found.append((f"line {call.line}", kw))
        except ValueError as exc:
            found.append((f"line {call.line}", {"unresolved": str(exc)}))
    for where, kw in found:
        kw.pop("unknown", None)
        out.append({"id": r.get("id", "?"), "where": where, "args": {k: plain(v) for k, v in kw.items()}})
print(json.dumps(out))
'''

BUILD = r'''
import json, os, sys, tempfile, time
mode, args_file, cache, fail_fast = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
args = json.loads(open(args_file).read())
import torch.utils.cpp_extension as ce
home = os.environ.get("KM_EMULATE_CUDA_HOME")
if home:  # no GPU: torch's CUDA libraries are not in a CPU torch; the link leaves them out
    ce.CUDA_HOME = home
    import functools
    _prep = ce._prepare_ldflags
    @functools.wraps(_prep)  # torch_flags reads its signature
    def _ldflags(*a, **k):
        return [f for f in _prep(*a, **k) if f not in ("-lc10_cuda", "-ltorch_cuda")]
    ce._prepare_ldflags = _ldflags
if args.get("build_directory"):  # the candidate's folder (often under its HOME): a fresh one
    args["build_directory"] = tempfile.mkdtemp(prefix="km-bd-")
log = {}
if mode == "ours":
    from kernelmill.verify.build import inline_build
    builder = inline_build.install(cache)
    if not fail_fast and hasattr(inline_build, "fail_fast_checks"):
        inline_build.fail_fast_checks(False)
t = time.perf_counter()
outcome, error = "ok", ""
try:
    ce.load_inline(**args)
except RuntimeError as exc:
    error = str(exc)
    outcome = "compile_error" if error.startswith("Error building extension") else "other"
except (ImportError, OSError) as exc:  # built; a CUDA extension of a CPU torch does not load
    error = str(exc)
    outcome = "ok" if (home and "undefined symbol" in error) else "other"
except BaseException as exc:
    outcome, error = "other", f"{type(exc).__name__}: {exc}"
seconds = time.perf_counter() - t
if mode == "ours":
    log = {**inline_build.builder_log(), **inline_build.builder_times()}
    log.pop("slim_error", None)
print(json.dumps({"outcome": outcome, "seconds": round(seconds, 3), "error": error[:2000], "log": log}, default=str))
'''


def corpus_calls(path: Path, env: dict) -> list[dict]:
    """The corpus's distinct load_inline calls (import-time and lazy), as {id, where, args}."""
    res = subprocess.run([sys.executable, "-c", EXTRACT, str(path)], capture_output=True, text=True, env=env,
                         timeout=900, cwd=tempfile.gettempdir())
    if res.returncode != 0:
        raise SystemExit(res.stderr[-3000:])
    calls, seen = [], set()
    for c in json.loads(res.stdout.strip().splitlines()[-1]):
        key = json.dumps([c["id"] if "unresolved" in c["args"] else "", c["args"]], sort_keys=True)
        if key not in seen:
            seen.add(key)
            calls.append(c)
    return calls


def measure(mode: str, args: dict, cache: str, env: dict, fail_fast: bool, timeout: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="km-ff-") as tmp:
        path = Path(tmp) / "args.json"
        path.write_text(json.dumps(args))
        e = {**env, "TORCH_EXTENSIONS_DIR": str(Path(tmp) / "ext"), "HOME": tmp}
        t0 = time.perf_counter()
        try:
            res = subprocess.run([sys.executable, "-c", BUILD, mode, str(path), cache, "1" if fail_fast else "0"],
                                 capture_output=True, text=True, env=e, timeout=timeout, cwd=tmp)
        except subprocess.TimeoutExpired:
            return {"outcome": "timeout", "seconds": timeout, "process_s": timeout}
    try:
        out = json.loads(res.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        out = {"outcome": "other", "seconds": None, "error": res.stderr[-800:]}
    out["process_s"] = round(time.perf_counter() - t0, 3)
    return out


def prepare(calls: list[dict], cache: str, env: dict) -> float:
    """Precompiled headers and binding objects for the calls' flag sets, as a run makes them ahead."""
    from kernelmill.verify.build.build_prepare import binding_specs, run_specs

    # the calls as module-level literals: build_prepare reads flags the way it reads any candidate's
    codes = []
    for c in calls:
        a = c["args"]
        kw = ", ".join(f"{k}={v!r}" for k, v in a.items())
        codes.append(f"from torch.utils.cpp_extension import load_inline\next = load_inline({kw})\n")
    specs = run_specs(codes, min_uses=1)
    bindings = [b for code in codes for b in binding_specs(code)]
    Path(cache).mkdir(parents=True, exist_ok=True)
    (Path(cache) / "bindings.json").write_text(json.dumps(bindings))
    entry = (["-c", "import os, sys, torch.utils.cpp_extension as ce; ce.CUDA_HOME = os.environ["
                    "'KM_EMULATE_CUDA_HOME']; from kernelmill.verify.build import build_prepare; build_prepare.main()"]
             if env.get("KM_EMULATE_CUDA_HOME") else ["-m", "kernelmill.verify.build.build_prepare"])
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, *entry, cache, "--specs", json.dumps(specs), "--bindings",
                          str(Path(cache) / "bindings.json")], capture_output=True, text=True, env=env)
    if res.returncode != 0:
        print(res.stdout[-1000:], res.stderr[-2000:], file=sys.stderr)
    return round(time.perf_counter() - t0, 2)


def fresh(prepared: str, folder: str) -> str:
    """An empty cache but for what the preparation made (headers, binding objects, identifiers)."""
    shutil.rmtree(folder, ignore_errors=True)
    for kind in ("pch", "obj", "idents"):
        if os.path.isdir(os.path.join(prepared, kind)):  # hard links: the headers are ~0.6 GB each
            shutil.copytree(os.path.join(prepared, kind), os.path.join(folder, kind), copy_function=os.link)
    return folder


def _stats(values: list[float]) -> dict:
    return ({"n": len(values), "median_s": round(statistics.median(values), 2), "max_s": round(max(values), 2)}
            if values else {"n": 0})


def summarize(rows: list[dict], modes: list[str]) -> dict:
    out = {}
    for m in modes:
        fails = [r[m]["seconds"] for r in rows if r.get(m, {}).get("outcome") == "compile_error"]
        oks = [r[m]["seconds"] for r in rows if r.get(m, {}).get("outcome") == "ok"]
        out[m] = {"compile_error": _stats(fails), "ok": _stats(oks),
                  "other": sum(r.get(m, {}).get("outcome") not in ("ok", "compile_error", None) for r in rows)}
    if "stock" in modes:
        for m in modes:
            if m == "stock":
                continue
            agree = [r for r in rows if m in r and "stock" in r]
            out[f"{m}_outcome_agrees_with_stock"] = f"{sum(r[m]['outcome'] == r['stock']['outcome'] for r in agree)}/{len(agree)}"
            both_ok = [r for r in agree if r[m]["outcome"] == r["stock"]["outcome"] == "ok"]
            if both_ok:
                out[f"{m}_ok_vs_stock"] = {"n": len(both_ok),
                                           "median_ours_s": round(statistics.median(r[m]["seconds"] for r in both_ok), 2),
                                           "median_stock_s": round(statistics.median(r["stock"]["seconds"] for r in both_ok), 2)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", default=str(CORPUS), help="a JSONL of candidates (custom_code or code)")
    ap.add_argument("--cpu-emulate", metavar="CUDA_HOME", help="no GPU here: build for sm_90 against a CPU torch")
    ap.add_argument("--before", action="store_true",
                    help="also the builder with the fail-fast checks off (the code before issue 40), on the calls "
                         "whose build fails (a build that compiles takes the same path either way)")
    ap.add_argument("--stock-ok", type=int, default=0, help="torch's load_inline on the first K calls that build")
    ap.add_argument("--stock-failing", type=int, default=0, help="torch's load_inline on the first K calls that fail")
    ap.add_argument("--only", default="", help="comma-separated candidate ids")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per build")
    ap.add_argument("--cold", action="store_true",
                    help="nothing prepared: every build starts from an empty cache (no precompiled header, no "
                         "header identifiers), as a cold machine's first builds do")
    ap.add_argument("--burst", type=int, default=0,
                    help="with --cold: N builds at once sharing one cache, empty at the start (a cold run's build "
                         "processes all start within a second: on the device 25 failing builds and as many "
                         "successful ones), each timed from its start")
    ap.add_argument("--work", help="keep caches here (default: a temporary folder, removed)")
    ap.add_argument("--out", default="build_fail_fast.json")
    args = ap.parse_args()

    env = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    if args.cpu_emulate:
        env.update(KM_EMULATE_CUDA_HOME=args.cpu_emulate, TORCH_CUDA_ARCH_LIST="9.0")
        import torch.utils.cpp_extension as ce

        ce.CUDA_HOME = args.cpu_emulate
    elif "TORCH_CUDA_ARCH_LIST" not in env:
        import torch

        env["TORCH_CUDA_ARCH_LIST"] = "{}.{}".format(*torch.cuda.get_device_capability())
    sys.path.insert(0, str(ROOT / "src"))
    from kernelmill.verify.build.inline_build import first_error_line

    calls = corpus_calls(Path(args.corpus).resolve(), env)  # read by a child in a temporary folder
    unresolved = [c for c in calls if "unresolved" in c["args"]]
    calls = [c for c in calls if "unresolved" not in c["args"]]
    if args.only:  # in the order given
        order = args.only.split(",")
        calls = sorted([c for c in calls if c["id"] in order], key=lambda c: order.index(c["id"]))
    calls = calls[: args.limit or None]
    print(json.dumps({"calls": len(calls), "unresolved": [f"{c['id']} {c['where']}: {c['args']['unresolved']}"
                                                          for c in unresolved]}), flush=True)
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="km-failfast-"))
    prepared = str(work / "prepared")
    done = Path(prepared) / "prepare_s.txt"  # made before (--work kept): reused
    if args.cold:  # an empty folder: `fresh` then gives every build an empty cache
        Path(prepared).mkdir(parents=True, exist_ok=True)
        prepare_s = 0.0
    else:
        prepare_s = float(done.read_text()) if done.exists() else prepare(calls, prepared, env)
        if not (Path(prepared) / "idents").exists():  # a cache prepared before issue 40: its identifiers
            prepare_s += prepare(calls, prepared, env)
        done.write_text(str(prepare_s))
    print(json.dumps({"prepare_s": prepare_s}), flush=True)
    modes = ["ours"] + (["ours_before"] if args.before else [])
    rows = []
    if args.burst:
        if not args.cold or args.before or args.stock_ok or args.stock_failing:
            raise SystemExit("--burst measures kernelmill's builder from cold: give --cold, without --before/--stock-*")
        cache = fresh(prepared, str(work / "burst"))
        with ThreadPoolExecutor(args.burst) as pool:
            results = list(pool.map(lambda c: measure("ours", c["args"], cache, env, True, args.timeout), calls))
        for c, res in zip(calls, results):
            res["first_error"] = first_error_line(res.pop("error", "") or "")
            rows.append({"id": c["id"], "where": c["where"], "ours": res})
            print(json.dumps({"id": c["id"], "outcome": res.get("outcome"), "seconds": res.get("seconds"),
                              "process_s": res.get("process_s"), "fail_fast": (res.get("log") or {}).get("fail_fast")}),
                  flush=True)
        shutil.rmtree(cache, ignore_errors=True)
    for i, c in enumerate([] if args.burst else calls):  # one at a time
        row = {"id": c["id"], "where": c["where"]}
        for m in modes:
            if m == "ours_before" and row["ours"]["outcome"] == "ok":
                continue
            cache = fresh(prepared, str(work / f"{m}-{i}"))
            row[m] = measure("ours", c["args"], cache, env, m == "ours", args.timeout)
            shutil.rmtree(cache, ignore_errors=True)
        ok = row["ours"]["outcome"] == "ok"
        stock = (sum(r["ours"]["outcome"] == "ok" and "stock" in r for r in rows) < args.stock_ok if ok else
                 sum(r["ours"]["outcome"] != "ok" and "stock" in r for r in rows) < args.stock_failing)
        if stock:
            row["stock"] = measure("stock", c["args"], "", env, False, args.timeout)
        for m in [k for k in (*modes, "stock") if k in row]:
            row[m]["first_error"] = first_error_line(row[m].pop("error", "") or "")
        rows.append(row)
        print(json.dumps({k: ({kk: vv for kk, vv in v.items() if kk != "log"} | (
            {kk: v["log"][kk] for kk in ("fail_fast", "check_s", "slim", "merged", "cuda_split", "compiled", "cancelled", "fallback")
             if kk in v.get("log", {})}) if isinstance(v, dict) else v) for k, v in row.items()}), flush=True)
    summary = summarize(rows, modes + (["stock"] if any("stock" in r for r in rows) else []))
    summary.update(prepare_s=prepare_s, cold=args.cold, burst=args.burst, calls=len(calls), unresolved=len(unresolved),
                   machine=os.uname().nodename, cores=os.cpu_count(), emulated=bool(args.cpu_emulate),
                   load_after=os.getloadavg())
    print(json.dumps(summary, indent=1))
    Path(args.out).write_text(json.dumps({"summary": summary, "rows": rows,
                                          "unresolved": [{"id": c["id"], "where": c["where"], **c["args"]}
                                                         for c in unresolved]}, indent=1))
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

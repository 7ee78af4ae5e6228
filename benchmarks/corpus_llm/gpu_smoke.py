"""GPU smoke test of the corpus: does every candidate build, run and agree
with its reference (or disagree, for the `# expect: incorrect` ones)?

Each candidate runs in its own process (--jobs at a time, so the
load_inline builds of different candidates overlap on the CPU cores): import
(module-level builds happen here), ModelNew(*init) (__init__-time builds),
one forward on the task's full-size inputs (forward-time builds), then
allclose(atol = rtol = --tol) against the reference `Model` built under the
same seed; TF32 off. No timing: this checks the corpus, it is not a
benchmark. Task kinds resolve as in check.py.

    python benchmarks/corpus_llm/gpu_smoke.py --jobs 12 --out smoke.json
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import check  # noqa: E402

CHILD = r"""
import json, sys, time, importlib.util, torch
spec = json.loads(sys.argv[1])
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
def imp(path, name):
    s = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(s)
    sys.modules[name] = m
    s.loader.exec_module(m)
    return m
def flat(o):
    if isinstance(o, torch.Tensor):
        return [o]
    if isinstance(o, (list, tuple)):
        return [t for x in o for t in flat(x)]
    return []
out = {}
t0 = time.perf_counter()
task = imp(spec["task"], "smoke_task")
init = task.get_init_inputs()
torch.manual_seed(42)
ref = task.Model(*init).cuda()
try:
    cand = imp(spec["candidate"], "smoke_cand")
    out["import_s"] = round(time.perf_counter() - t0, 2)
    torch.manual_seed(42)
    new = cand.ModelNew(*init).cuda()
    out["init_s"] = round(time.perf_counter() - t0, 2)
except Exception as e:
    out.update(status="compile_error", error=f"{type(e).__name__}: {str(e)[-400:]}")
    print(json.dumps(out)); sys.exit(0)
torch.manual_seed(1234)
inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in task.get_inputs()]
try:
    with torch.no_grad():
        want = ref(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])
        got = new(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])
        torch.cuda.synchronize()
    out["first_forward_s"] = round(time.perf_counter() - t0, 2)
except Exception as e:
    out.update(status="runtime_error", error=f"{type(e).__name__}: {str(e)[-400:]}")
    print(json.dumps(out)); sys.exit(0)
w, g = flat(want), flat(got)
if len(w) != len(g) or any(a.shape != b.shape for a, b in zip(w, g)):
    out.update(status="incorrect", error=f"shapes {[tuple(a.shape) for a in w]} vs {[tuple(b.shape) for b in g]}")
else:
    diff = max(float((a.double() - b.double()).abs().max()) for a, b in zip(w, g))
    ok = all(torch.allclose(a, b, atol=spec["tol"], rtol=spec["tol"]) for a, b in zip(w, g))
    loose = all(torch.allclose(a, b, atol=1e-2, rtol=1e-2) for a, b in zip(w, g))
    out.update(status="ok" if ok else "incorrect", max_abs_diff=diff, within_1e_2=loose)
print(json.dumps(out))
"""


def run_one(c, tol: float, timeout: float, ext_dir: str) -> dict:
    spec = {"task": str(check.task_file(c.task)), "candidate": str(c.path), "tol": tol}
    env = dict(os.environ, TORCH_EXTENSIONS_DIR=ext_dir, MAX_JOBS="2")
    t0 = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, "-c", CHILD, json.dumps(spec)], capture_output=True, text=True,
                           timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "seconds": timeout}
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    r = json.loads(lines[-1]) if lines else {"status": "crashed", "error": (p.stderr or "")[-600:]}
    r["seconds"] = round(time.perf_counter() - t0, 1)
    return r


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="")
    ap.add_argument("--language", default="", help="comma-separated languages to keep")
    ap.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) - 2))
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    cands = [c for c in check.load_corpus(HERE) if c.runs_on("cuda")]
    if args.only:
        cands = [c for c in cands if c.name in set(args.only.split(","))]
    if args.language:
        cands = [c for c in cands if c.language in set(args.language.split(","))]
    ext_dir = tempfile.mkdtemp(prefix="smoke-ext-")
    results = {}
    t0 = time.perf_counter()
    with cf.ThreadPoolExecutor(args.jobs) as pool:
        futs = {pool.submit(run_one, c, args.tol, args.timeout, ext_dir): c for c in cands}
        for i, f in enumerate(cf.as_completed(futs), 1):
            c = futs[f]
            r = f.result()
            r["expect"] = c.expect
            r["as_expected"] = r["status"] == c.expect
            results[c.name] = r
            print(f"[{i}/{len(cands)}] {c.name}: {r['status']}{'' if r['as_expected'] else '  <-- UNEXPECTED'} "
                  f"({r['seconds']} s){'  ' + r['error'][:200] if r.get('error') and not r['as_expected'] else ''}", flush=True)
            if args.out:
                args.out.write_text(json.dumps(results, indent=1))
    n_exp = sum(r["as_expected"] for r in results.values())
    by = {}
    for r in results.values():
        by[r["status"]] = by.get(r["status"], 0) + 1
    print(f"{len(results)} candidates in {time.perf_counter() - t0:.0f} s: {by}; {n_exp} as expected")
    return 0 if n_exp == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())

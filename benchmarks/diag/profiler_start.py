"""Where a run process's warm-up CPU goes: each step's wall and CPU seconds, in
fresh processes, for several orders of the steps (issue 14).

A spare and its candidate's process each open a CUDA context, start the
profiler and warm cuBLAS/cuDNN (guards/trace.warm_cuda); cpu_by_process.py put
~9 CPU-s on each such process on an H200. This script splits it by step with
plain torch (no kernelmill code on the measured path), reading the process's own
CPU clock (all threads: time.process_time) around each step.

    python benchmarks/diag/profiler_start.py --repeats 3 --out profiler_start.json
    py-spy record --native -f raw -o spy.txt -- python benchmarks/diag/profiler_start.py --one as_warm_cuda

Variants (each a fresh interpreter):
  as_warm_cuda   context, profiler with CPU activities, a CUDA-profiled call, cuBLAS/cuDNN
  cuda_first     context, then a CUDA-profiled call directly (no CPU-only start)
  before_context profiler with CPU activities before the context exists
  no_profiler    context, cuBLAS/cuDNN only
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

CHILD = r"""
import json, sys, time
out = []
def step(name, fn):
    w, c = time.perf_counter(), time.process_time()
    fn()
    out.append({"step": name, "wall_s": time.perf_counter() - w, "cpu_s": time.process_time() - c})
variant = sys.argv[1]
mods = {}
def imp():
    import torch
    mods["torch"] = torch
step("import torch", imp)
torch = mods["torch"]
def ctx():
    torch.zeros(1, device="cuda"); torch.cuda.synchronize()
def prof_cpu():
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU]):
        torch.ones(8) * 2
def prof_cuda():
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        (torch.ones(8, device="cuda") * 2).sum().item()
    list(p.events())
def blas():
    a = torch.randn(256, 256, device="cuda")
    (a @ a).sum().item()
def dnn():
    a = torch.randn(256, 256, device="cuda")
    torch.nn.functional.conv2d(a[None, None], a[None, None, :3, :3]).sum().item()
def imp_prof():
    import torch.profiler  # noqa: F401
plans = {
    "as_warm_cuda": [("context", ctx), ("import torch.profiler", imp_prof), ("profiler start, CPU", prof_cpu),
                     ("profiled CUDA call", prof_cuda), ("second profiled CUDA call", prof_cuda),
                     ("cuBLAS", blas), ("cuDNN", dnn)],
    "cuda_first": [("context", ctx), ("import torch.profiler", imp_prof), ("profiled CUDA call", prof_cuda),
                   ("second profiled CUDA call", prof_cuda)],
    "before_context": [("import torch.profiler", imp_prof), ("profiler start, CPU", prof_cpu), ("context", ctx),
                       ("profiled CUDA call", prof_cuda)],
    "no_profiler": [("context", ctx), ("cuBLAS", blas), ("cuDNN", dnn)],
}
for name, fn in plans[variant]:
    step(name, fn)
print(json.dumps(out))
"""


def run_variant(variant: str) -> list[dict]:
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-c", CHILD, variant], capture_output=True, text=True, timeout=300)
    if res.returncode != 0:
        raise SystemExit(f"variant {variant} failed:\n{res.stderr[-2000:]}")
    steps = json.loads(res.stdout.strip().splitlines()[-1])
    steps.append({"step": "process (wall)", "wall_s": time.perf_counter() - t0, "cpu_s": None})
    return steps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variants", default="as_warm_cuda,cuda_first,before_context,no_profiler")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=None, help="JSON with every repeat's steps")
    ap.add_argument("--one", metavar="VARIANT", help="run one variant in this process (e.g. under py-spy) and print its steps")
    args = ap.parse_args()
    if args.one:
        sys.argv = [sys.argv[0], args.one]
        exec(compile(CHILD, "<profiler_start child>", "exec"), {"__name__": "__child__"})
        return
    results: dict[str, list] = {}
    for _ in range(args.repeats):
        for v in args.variants.split(","):
            results.setdefault(v, []).append(run_variant(v))
    for v, runs in results.items():
        print(f"== {v} (median of {len(runs)})")
        for i, s in enumerate(runs[0]):
            walls = [r[i]["wall_s"] for r in runs]
            cpus = [r[i]["cpu_s"] for r in runs if r[i]["cpu_s"] is not None]
            cpu = f"{statistics.median(cpus):7.2f}" if cpus else "      -"
            print(f"  {s['step']:<28} wall {statistics.median(walls):7.2f} s  cpu {cpu} s")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()

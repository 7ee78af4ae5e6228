"""Why is kernelmill's KernelBench-convention figure of a launch-bound reference
several times KernelBench's own (issue 39, session 9)?

Times task references (pure PyTorch, KernelBench files) in KernelBench's
convention (per trial: synchronize, 256 MB fill, events around one call,
synchronize; mean of 100 trials after one discarded), each task in a fresh
process, under conditions that tell the candidate causes apart:

  plain     a fresh `python` process, nothing else running (KernelBench's own setting)
  loaded    the same while `--load N` busy processes run at nice 10 (what
            kernelmill's builds look like to the host: niced compilers on every core)
  forked    a child forked from a parent that imported torch without touching CUDA
            (how kernelmill's zygote starts its supervisors and candidates)
  bench     kernelmill's own Bench.kernelbench_round in a plain process
  pool      the same, its inputs from kernelmill's shifting InputPool refilled before each trial
  warm_cuda kernelmill's warm-up of a GPU process first (trace.warm_cuda)
  cpu_kineto / thread_pools   its two parts alone: the host-only profiler start, cuBLAS/cuDNN
  pin_local / pin_one   the process pinned to the GPU's NUMA-local CPUs (NVML), or to one of them
  (a condition named more than once runs once per mention, each in a fresh process)

Prints, per task and condition, the events' mean and the host path's median (us),
and writes them as JSON (--out).

    python benchmarks/diag/kb_host_path.py --external .dev/kernels.jsonl --rows cudal1-a100-L1-100 --out host_path.json

(The external table's references are the sizes kernelmill and KernelBench's harness timed;
KernelBench's own task files are larger: session 9's first run of this script timed those,
8 ms calls, where the host path does not show.)
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _time_task(task: str, cond: str) -> dict:
    import torch

    if cond in ("pin_local", "pin_one"):  # the GPU's NUMA-local cores (NVML), or one of them
        cpus = gpu_local_cpus()
        os.sched_setaffinity(0, cpus if cond == "pin_local" else {sorted(cpus)[len(cpus) // 2]})
    src = str(HERE.parents[1] / "src")
    if cond in ("warm_cuda", "cpu_kineto", "thread_pools", "bench", "pool"):
        sys.path.insert(0, src)
    if cond == "warm_cuda":  # kernelmill's whole warm-up of a GPU process
        from kernelmill.verify.guards.trace import warm_cuda

        warm_cuda(torch.device("cuda"))
    elif cond == "cpu_kineto":  # its host-only profiler start
        from kernelmill.verify.measure.kernel_time import kineto_profile

        with kineto_profile(cuda=False):
            torch.ones(8) * 2
    elif cond == "thread_pools":
        from kernelmill.verify.guards.trace import warm_thread_pools

        warm_thread_pools(torch.device("cuda"))
    ns: dict = {}
    exec(compile(Path(task).read_text(encoding="utf-8"), task, "exec"), ns)
    torch.manual_seed(42)
    model = ns["Model"](*ns["get_init_inputs"]()).cuda()
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in ns["get_inputs"]()]
    with torch.no_grad():
        for _ in range(5):
            model(*inputs)
        torch.cuda.synchronize()
        if cond in ("bench", "pool"):
            from kernelmill.verify.measure.inputs import InputPool
            from kernelmill.verify.measure.timing import Bench, TimingConfig

            if cond == "pool":  # the shifting input pool, refilled before every trial
                pool = InputPool(inputs)
                b = Bench(lambda: model(*pool.current), "cuda", TimingConfig(),
                          prepare=lambda i: pool.prepare(inputs, 1.0))
            else:
                b = Bench(lambda: model(*inputs), "cuda", TimingConfig())
            ev = b.kernelbench_round(100)
            return {"events_mean_us": statistics.fmean(ev) * 1e3, "events_median_us": statistics.median(ev) * 1e3,
                    "host_median_us": statistics.median(b.kb_host_ms) * 1e3, "state": b.kb_state}
        fill = torch.empty(32 << 20, dtype=torch.int64, device="cuda")
        ev, host = [], []
        for t in range(101):
            torch.cuda.synchronize()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            fill.fill_(42)
            start.record()
            h0 = time.perf_counter()
            model(*inputs)
            h1 = time.perf_counter()
            end.record()
            torch.cuda.synchronize()
            if t:
                ev.append(start.elapsed_time(end))
                host.append(h1 - h0)
    return {"events_mean_us": statistics.fmean(ev) * 1e3, "events_median_us": statistics.median(ev) * 1e3,
            "host_median_us": statistics.median(host) * 1e6}


def gpu_local_cpus() -> set[int]:
    """The CPUs NVML calls close to GPU 0 (its ideal affinity), else every CPU this process may use."""
    try:
        import pynvml

        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        words = pynvml.nvmlDeviceGetCpuAffinity(h, (os.cpu_count() + 63) // 64)
        cpus = {64 * i + b for i, w in enumerate(words) for b in range(64) if w >> b & 1}
        return cpus & os.sched_getaffinity(0) or os.sched_getaffinity(0)
    except Exception:  # noqa: BLE001 - a diagnosis: fall back to every allowed CPU
        return os.sched_getaffinity(0)


def _child(task: str, q) -> None:
    q.put(_time_task(task, "plain"))


def run_fresh(task: str, cond: str = "plain") -> dict:
    out = subprocess.run([sys.executable, __file__, "--one", task, "--cond", cond],
                         capture_output=True, text=True, timeout=300)
    if out.returncode:
        return {"error": out.stderr[-500:]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_forked(task: str) -> dict:
    import torch  # noqa: F401 - the parent imports torch, as the zygote does, without CUDA

    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=(task, q))
    p.start()
    res = q.get(timeout=300)
    p.join()
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tasks", nargs="*")
    ap.add_argument("--load", type=int, default=os.cpu_count() or 1, help="busy processes of the loaded condition")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--cond", default="plain", help=argparse.SUPPRESS)
    ap.add_argument("--external", type=Path, help="a table of external kernels (id, ref_code): time these rows' references")
    ap.add_argument("--rows", default="", help="with --external: comma-separated ids")
    ap.add_argument("--conditions", default="plain,bench,loaded,forked,warm_cuda,cpu_kineto,thread_pools,pool")
    a = ap.parse_args()
    if a.one:
        print(json.dumps(_time_task(a.one, a.cond)))
        return 0
    tasks = list(a.tasks)
    if a.external:
        import tempfile

        want = [r.strip() for r in a.rows.split(",") if r.strip()]
        folder = Path(tempfile.mkdtemp(prefix="kb-host-"))
        for line in a.external.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row["id"] in want:
                (folder / f"{row['id'].replace('-', '_')}.py").write_text(row["ref_code"], encoding="utf-8")
                tasks.append(str(folder / f"{row['id'].replace('-', '_')}.py"))
    conds = [c.strip() for c in a.conditions.split(",") if c.strip()]
    results: dict = {}
    for task in tasks:
        name = Path(task).stem
        r = results[name] = {}
        for i, c in enumerate(conds):  # a condition named twice is run twice (fresh processes)
            if c not in ("loaded", "forked"):
                r[c if conds.count(c) == 1 else f"{c}#{i}"] = run_fresh(task, c.split("#")[0])
        hogs = [] if "loaded" not in conds else [subprocess.Popen(["nice", "-n", "10", sys.executable, "-c", "while True: pass"])
                for _ in range(a.load)]
        try:
            time.sleep(1.0)
            if hogs:
                r["loaded"] = run_fresh(task)
        finally:
            for h in hogs:
                h.kill()
            for h in hogs:
                h.wait()
        if "forked" in conds:
            r["forked"] = run_forked(task)
        for cond, v in r.items():
            print(f"{name:40s} {cond:7s} " + ("ERROR " + v["error"][-200:] if "error" in v else
                  f"events mean {v['events_mean_us']:8.1f} us  median {v['events_median_us']:8.1f} us  "
                  f"host median {v['host_median_us']:8.1f} us"), flush=True)
        if a.out:
            a.out.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

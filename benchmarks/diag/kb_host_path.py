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

Prints, per task and condition, the events' mean and the host path's median (us),
and writes them as JSON (--out).

    python benchmarks/diag/kb_host_path.py .kb/tasks/level1/100_HingeLoss.py ... --out host_path.json
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


def _time_task(task: str, bench: bool) -> dict:
    import torch

    ns: dict = {}
    exec(compile(Path(task).read_text(encoding="utf-8"), task, "exec"), ns)
    torch.manual_seed(42)
    model = ns["Model"](*ns["get_init_inputs"]()).cuda()
    inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in ns["get_inputs"]()]
    with torch.no_grad():
        for _ in range(5):
            model(*inputs)
        torch.cuda.synchronize()
        if bench:
            sys.path.insert(0, str(HERE.parents[1] / "src"))
            from kernelmill.verify.measure.timing import Bench, TimingConfig

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


def _child(task: str, bench: bool, q) -> None:
    q.put(_time_task(task, bench))


def run_fresh(task: str, bench: bool = False) -> dict:
    out = subprocess.run([sys.executable, __file__, "--one", task] + (["--bench"] if bench else []),
                         capture_output=True, text=True, timeout=300)
    if out.returncode:
        return {"error": out.stderr[-500:]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_forked(task: str) -> dict:
    import torch  # noqa: F401 - the parent imports torch, as the zygote does, without CUDA

    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=(task, False, q))
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
    ap.add_argument("--bench", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        print(json.dumps(_time_task(a.one, a.bench)))
        return 0
    results: dict = {}
    for task in a.tasks:
        name = Path(task).stem
        r = results[name] = {"plain": run_fresh(task), "bench": run_fresh(task, bench=True)}
        hogs = [subprocess.Popen(["nice", "-n", "10", sys.executable, "-c", "while True: pass"])
                for _ in range(a.load)]
        try:
            time.sleep(1.0)
            r["loaded"] = run_fresh(task)
        finally:
            for h in hogs:
                h.kill()
            for h in hogs:
                h.wait()
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

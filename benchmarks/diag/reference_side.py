"""What a guarded run's supervisor pays to draw the input sets and run the reference on
them, first time in a process against a second time, per builtin task (issue 14).

A run's supervisor is a fresh process (a spare forked from the run zygote): whatever
the first draw or the first reference call of a task costs (CUDA's lazy loading of each
kernel, cuDNN's engine choice, allocator growth) is paid once per candidate. This forks
one child per task from a parent that imported torch and the supervisor (no CUDA
context above the fork, as in the zygote), warms it as a spare is warmed
(guards/trace.warm_cuda), then times, in order: the sets drawn, drawn again, the
reference's work (supervisor._ReferenceWork: outputs on every set, mutation and
aliasing checks) and that work again. With `--warm-draws`, the child first runs
`measure.inputs.warm_draws` (what the spare's warm-up does since this session) and the
first draw shows what is left.

    python benchmarks/diag/reference_side.py --out ref_side.json            # on a GPU machine
    python benchmarks/diag/reference_side.py --warm-draws --out ref_side_warm.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import torch

from kernelmill.tasks import load_tasks
from kernelmill.verify.measure import inputs as inp
from kernelmill.verify.guards import trace
from kernelmill.verify.process import supervisor as sv
from kernelmill.verify.process.loading import load_reference


class _Job:
    def __init__(self, task, trials: int):
        self.task_code, self.task_id, self.sizes = task.code, task.task_id, {}
        self.weight_seed, self.input_seed, self.trials = 0, 12345, trials
        self.ref_profile = {"given": True}  # as after the task's first candidate


def _child(task, device: torch.device, trials: int, warm_draws: bool) -> dict:
    trace.warm_cuda(device)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    t = {}
    if warm_draws:
        t0 = time.perf_counter()
        inp.warm_draws(device)
        sync()
        t["warm_draws"] = time.perf_counter() - t0
    job = _Job(task, trials)
    t0 = time.perf_counter()
    ref_mod, _, ref = load_reference(job)
    ref = ref.to(device)
    sync()
    t["load"] = time.perf_counter() - t0
    for k in (1, 2):
        t0 = time.perf_counter()
        sets = sv._draw_sets(job, ref_mod, device)
        sync()
        t[f"draw_{k}"] = time.perf_counter() - t0
    for k in (1, 2):
        t0 = time.perf_counter()
        sv._ReferenceWork(job, ref, sets, device)
        sync()
        t[f"ref_{k}"] = time.perf_counter() - t0
    t["sets_mb"] = inp.nbytes(sets) / 2**20
    return {k: round(v, 4) for k, v in t.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--warm-draws", action="store_true", help="run inputs.warm_draws first (the spare's warm-up)")
    ap.add_argument("--only", help="comma-separated task ids")
    ap.add_argument("--out")
    args = ap.parse_args()
    tasks = load_tasks("builtin")
    chosen = [t for t in tasks if not args.only or t.task_id in args.only.split(",")]
    rows = {}
    for task in chosen:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: its own CUDA context, as a spare has
            os.close(r)
            try:
                out = json.dumps(_child(task, torch.device(args.device), args.trials, args.warm_draws))
            except BaseException as exc:  # noqa: BLE001 - reported, not raised
                out = json.dumps({"error": f"{type(exc).__name__}: {exc}"[:300]})
            os.write(w, out.encode())
            os._exit(0)
        os.close(w)
        data = b""
        while chunk := os.read(r, 65536):
            data += chunk
        os.close(r)
        os.waitpid(pid, 0)
        rows[task.task_id] = json.loads(data or b'{"error": "no output"}')
        print(task.task_id, json.dumps(rows[task.task_id]), flush=True)
    ok = [v for v in rows.values() if "error" not in v]
    med = {k: round(statistics.median(v[k] for v in ok), 4) for k in ok[0]} if ok else {}
    print("medians (s):", json.dumps(med))
    if args.out:
        with open(args.out, "w") as fh:
            json.dump({"device": torch.cuda.get_device_name() if args.device.startswith("cuda") else "cpu", "warm_draws": args.warm_draws, "tasks": rows,
                       "medians": med}, fh, indent=1)


if __name__ == "__main__":
    sys.exit(main())

"""What a run worker's warm-up costs on a GPU, and which part of it disturbs a timing.

Issue 14: spares (verify/pools/standby.py) open a CUDA context and start the
profiler in two processes each, under the GPU lock held shared, so a timing waits
for them; on an H200 a group's warm-up took ~10 s. This script answers two
questions with plain torch (no kernelmill process code on the measured path):

1. ``--part cost``: how long each step of a warm-up takes (interpreter and
   ``import torch``, the CUDA context, the first profiled call, a second one), for
   1, 2, 4 and 8 processes started at once.
2. ``--part disturb``: a timer process times a ~10 us kernel chain with CUDA events
   without pause; other processes meanwhile (a) only import torch, (b) open a CUDA
   context, (c) start the profiler, (d) run kernels (the positive control). The
   timer's samples are grouped by which step was under way, so each step's effect
   on a timing is read directly.

    python benchmarks/diag/warmup_cost.py --part cost,disturb --out warmup.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

CHILD = r"""
import json, os, sys, time
marks = {"start": float(sys.argv[1])}
mode = sys.argv[2]
def mark(k):
    marks[k] = time.time()
    print(json.dumps({"mark": k, "t": marks[k]}), flush=True)
import torch
mark("imported")
if mode in ("context", "profiler", "kernels", "all"):
    torch.zeros(1, device="cuda"); torch.cuda.synchronize()
    mark("context")
if mode in ("profiler", "all"):
    from torch.profiler import ProfilerActivity, profile
    x = torch.ones(8, device="cuda")
    if mode == "profiler":  # the profiler's host side first (kineto without CUPTI), then CUPTI
        with profile(activities=[ProfilerActivity.CPU]) as p:
            (x * 2).sum().item()
        p.key_averages()
        mark("profiler_cpu")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
        (x * 2).sum().item()
    p.key_averages()
    mark("profiler1")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
        (x * 2).sum().item()
    p.key_averages()
    mark("profiler2")
if mode == "kernels":
    y = torch.randn(1 << 22, device="cuda")
    t_end = time.time() + 1.5
    while time.time() < t_end:
        for _ in range(50):
            y.mul_(1.0000001)
        torch.cuda.synchronize()
    mark("kernels")
print(json.dumps({"marks": marks}), flush=True)
"""

TIMER = r"""
import json, sys, time, torch
dur = float(sys.argv[1])
log = open(sys.argv[2], "w")
x = torch.randn(1 << 18, device="cuda")
for _ in range(200):
    x.mul_(1.0000001)
torch.cuda.synchronize()
print(json.dumps({"ready": time.time()}), flush=True)
samples = []
t_end = time.time() + dur
ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(20)]
while time.time() < t_end:
    for a, b in ev:
        a.record()
        for _ in range(3):
            x.mul_(1.0000001)
        b.record()
    torch.cuda.synchronize()
    now = time.time()
    log.write(json.dumps([now, [round(a.elapsed_time(b) * 1000.0, 2) for a, b in ev]]) + "\n")
log.close()
print(json.dumps({"done": time.time()}), flush=True)
"""


def _spawn(mode: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", CHILD, repr(time.time()), mode], stdout=subprocess.PIPE, text=True)


def _marks(proc: subprocess.Popen, timeout: float = 300) -> dict:
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        print(f"a child did not finish in {timeout} s: {out[-300:]}", flush=True)
        marks = {}
        for line in out.splitlines():
            msg = json.loads(line)
            if "mark" in msg:
                marks[msg["mark"]] = msg["t"]
        return marks
    for line in out.splitlines():
        msg = json.loads(line)
        if "marks" in msg:
            return msg["marks"]
    raise RuntimeError(f"child gave no marks: {out[-500:]}")


def part_cost(ns: list[int]) -> dict:
    steps = [("start", "imported"), ("imported", "context"), ("context", "profiler1"), ("profiler1", "profiler2")]
    res = {}
    for n in ns:
        procs = [_spawn("all") for _ in range(n)]
        marks = [_marks(p) for p in procs]
        row = {f"{b}_s": [round(m[b] - m[a], 3) for m in marks] for a, b in steps}
        row["total_s"] = [round(m["profiler2"] - m["start"], 3) for m in marks]
        row["all_done_s"] = round(max(m["profiler2"] for m in marks) - min(m["start"] for m in marks), 3)
        res[str(n)] = row
        print(f"{n} at once: " + ", ".join(f"{k} median {statistics.median(v):.2f}" for k, v in row.items()
                                           if isinstance(v, list)) + f", all done {row['all_done_s']} s", flush=True)
    return res


def part_disturb(rounds: int, budget_s: float) -> dict:
    """The timer runs alone for 2 s, then each disturbing step in turn, with gaps;
    every step stops by `budget_s` after the start."""
    import tempfile

    t_stop = time.time() + budget_s
    log = os.path.join(tempfile.mkdtemp(), "timer.jsonl")
    timer = subprocess.Popen([sys.executable, "-c", TIMER, str(budget_s), log], stdout=subprocess.PIPE, text=True)
    json.loads(timer.stdout.readline())  # ready
    windows: list[tuple[str, float, float]] = []
    time.sleep(2.0)
    for r in range(rounds):
        for mode in ("import", "context", "profiler", "kernels"):
            left = t_stop - time.time() - 3
            if left < 5:
                break
            marks = _marks(_spawn(mode), timeout=left)
            print(f"round {r} {mode}: " + ", ".join(f"{k} +{v - marks['start']:.2f}" for k, v in marks.items()),
                  flush=True)
            steps = [("import", "start", "imported"), ("context", "imported", "context"),
                     ("profiler_cpu", "context", "profiler_cpu"), ("profiler_cuda", "profiler_cpu", "profiler1"),
                     ("kernels", "context", "kernels")]
            for name, a, b in steps:
                if a in marks and b in marks:
                    windows.append((name, marks[a], marks[b]))
            time.sleep(0.5)
    timer.wait(timeout=max(10.0, t_stop - time.time() + 30))
    with open(log) as fh:
        samples = [json.loads(line) for line in fh if line.strip()]
    groups: dict[str, list[float]] = {"quiet": [], "import": [], "context": [], "profiler_cpu": [],
                                      "profiler_cuda": [], "kernels": []}
    prev = None
    windows.sort(key=lambda w: w[1])
    for now, times in samples:
        start = prev if prev is not None else now
        prev = now
        hit = [w for w, a, b in windows if a < now and b > start]
        key = hit[0] if len(hit) == 1 else ("quiet" if not hit else None)
        if key is not None:
            groups[key].extend(times)
    res = {}
    quiet = statistics.median(groups["quiet"]) if groups["quiet"] else float("nan")
    for k, v in groups.items():
        if not v:
            continue
        v = sorted(v)
        res[k] = {"n": len(v), "median_us": round(statistics.median(v), 2), "p90_us": round(v[int(0.9 * len(v))], 2),
                  "max_us": round(v[-1], 2), "share_over_1.5x": round(sum(t > 1.5 * quiet for t in v) / len(v), 4)}
        print(f"timer during {k}: {res[k]}", flush=True)
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--part", default="cost,disturb", help="cost, disturb or both (comma-separated)")
    ap.add_argument("--n", default="1,2,4,8", help="processes started at once, for --part cost")
    ap.add_argument("--rounds", type=int, default=3, help="times each disturbing step is repeated")
    ap.add_argument("--budget", type=float, default=120.0, help="seconds for --part disturb, all steps together")
    ap.add_argument("--out", default=None, help="JSON file for the results")
    a = ap.parse_args()
    res: dict = {"python": sys.version.split()[0]}
    parts = a.part.split(",")
    if "cost" in parts:
        res["cost"] = part_cost([int(x) for x in a.n.split(",")])
    if "disturb" in parts:
        res["disturb"] = part_disturb(a.rounds, a.budget)
    if a.out:
        with open(a.out, "w") as fh:
            json.dump(res, fh, indent=1)


if __name__ == "__main__":
    main()

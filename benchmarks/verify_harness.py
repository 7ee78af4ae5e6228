"""Measure the verification harness (issue 2's figures).

1. seconds per candidate, split into build / correctness / timing, for the builtin
   suite's candidates of the chosen languages (cold build cache);
2. a re-run of the finished set against the same store: wall time;
3. repeatability: the same kernel verified in R separate runs (fresh processes,
   no store), coefficient of variation of the median runtime, for a short
   (~50 us on an H100) and a long (~5 ms) kernel.

    python benchmarks/verify_harness.py --device cuda --languages cuda --runs 10 --json out.json
    python benchmarks/verify_harness.py --device cpu --languages torch,cpp

Prints a table; results go in docs/benchmarks.md by hand with the machine and date.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import textwrap
import time
from pathlib import Path

from kernelmill.records import Sample, Task
from kernelmill.tasks import load_tasks
from kernelmill.tasks.builtin import builtin_samples
from kernelmill.verify import VerifyConfig, verify_samples
from kernelmill.verify.devices import cuda_devices, device_name

# Two probes for repeatability: an elementwise op over ~150 MB of traffic
# (memory-bound, ~50 us at ~3 TB/s) and an fp32 matmul of ~270 GFLOP (~5 ms).
PROBES = {
    "short": ("elementwise ReLU, 18.9M fp32", "torch.relu(x)", "[torch.randn(18_874_368)]",
              "[torch.randn(4096)]"),
    "long": ("fp32 matmul 5120^3", "x @ x", "[torch.randn(5120, 5120)]", "[torch.randn(64, 64)]"),
}


def probe_task(name: str, expr: str, full: str, small: str, device: str) -> Task:
    code = textwrap.dedent(f"""
        import torch
        import torch.nn as nn

        class Model(nn.Module):
            def forward(self, x):
                return {expr}

        def get_inputs():
            return {full if device == 'cuda' else small}

        def get_init_inputs():
            return []
    """)
    return Task(f"probe/{name}", code, name=name, level=1)


def probe_sample(task: Task, expr: str) -> Sample:
    code = ("import torch\nimport torch.nn as nn\n\nclass ModelNew(nn.Module):\n"
            f"    def forward(self, x):\n        return {expr}\n")
    return Sample(f"{task.task_id}/same", task.task_id, "torch", code)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda" if cuda_devices() else "cpu")
    ap.add_argument("--languages", default="cuda")
    ap.add_argument("--runs", type=int, default=10, help="separate runs for repeatability")
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--json", type=Path, help="write all numbers here")
    args = ap.parse_args()
    langs = set(args.languages.split(","))
    tasks = load_tasks("builtin").by_id()
    report: dict = {"device": device_name(args.device), "date": time.strftime("%Y-%m-%d")}

    with tempfile.TemporaryDirectory() as tmp:
        cfg = VerifyConfig(device=args.device, workers=args.workers, cache_dir=f"{tmp}/cache")
        samples = [s for s in builtin_samples() if s.language in langs]
        t0 = time.perf_counter()
        verdicts = verify_samples(tasks, samples, cfg, store=f"{tmp}/store.sqlite", progress=True)
        cold_wall = time.perf_counter() - t0
        rows = []
        for s, v in zip(samples, verdicts):
            p = v.phases
            rows.append({"sample": s.sample_id, "status": v.status, "build_s": p.get("build_s"),
                         "check_s": p.get("check_s"), "time_s": p.get("time_s"), "speedup": v.speedup,
                         "runtime_ms": v.runtime_ms})
        print(f"\n{'sample':58s} {'status':14s} {'build_s':>8s} {'check_s':>8s} {'time_s':>8s} {'speedup':>8s}")
        for r in rows:
            fmt = lambda x: "-" if x is None else f"{x:8.3f}"  # noqa: E731
            print(f"{r['sample']:58s} {r['status']:14s} {fmt(r['build_s'])} {fmt(r['check_s'])} "
                  f"{fmt(r['time_s'])} {fmt(r['speedup'])}")

        def med(key):
            vals = [r[key] for r in rows if r[key] is not None]
            return statistics.median(vals) if vals else None

        report["per_candidate"] = rows
        report["median_s"] = {k: med(k) for k in ("build_s", "check_s", "time_s")}
        report["cold_wall_s"] = cold_wall
        report["candidates"] = len(samples)
        t0 = time.perf_counter()
        verify_samples(tasks, samples, cfg, store=f"{tmp}/store.sqlite")
        report["rerun_wall_s"] = time.perf_counter() - t0
        print(f"\n{len(samples)} candidates, cold wall {cold_wall:.1f} s; median build "
              f"{report['median_s']['build_s']} s, check {report['median_s']['check_s']} s, "
              f"time {report['median_s']['time_s']} s; re-run of the finished set: {report['rerun_wall_s']:.3f} s")

        report["repeatability"] = {}
        for key, (label, expr, full, small) in PROBES.items():
            task = probe_task(key, expr, full, small, args.device)
            sample = probe_sample(task, expr)
            medians = []
            for _ in range(args.runs):
                v = verify_samples([task], [sample], cfg)[0]  # no store: a fresh measurement each run
                if v.runtime_ms is None:
                    raise SystemExit(f"probe {key} failed: {v.status} {v.message}")
                medians.append(v.runtime_ms)
            mean = statistics.fmean(medians)
            cv = statistics.pstdev(medians) / mean
            report["repeatability"][key] = {"label": label, "medians_ms": medians, "mean_ms": mean, "cv": cv}
            print(f"repeatability {label}: mean of medians {mean:.4f} ms over {args.runs} runs, CV {100 * cv:.2f}%")

    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

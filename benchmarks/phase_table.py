"""Phase breakdown of a verdicts JSONL, and the GPU's busy share from an
nvidia-smi sample log: the issue 14 tables.

    python benchmarks/phase_table.py VERDICTS.jsonl [--smi SMI.csv] [--json OUT.json] [--gantt]

Phases are what each verdict's `phases` recorded (docs/SEMANTICS.md): build_s
(build phase, CPU workers), deferred_build_s (builds a run asked for), load_s,
check_s, time_s, guard_* (the guarded run's own work: drawing inputs, the
reference profile, exchanging tensors, judging), timing_lock_wait_s and
run_wall_s (the run process from start to verdict). The guard share of a
candidate is the sum of its guard_* phases over its run_wall_s; a second
share takes the waits for a warm process (spare_wait_s, cand_warm_wait_s) out
of the wall, since those grow with the spare policy and not with the guards.

Where the verdicts carry `measurement.timeline` (when each phase ran, seconds since
the batch began), a timeline summary follows: when the last build ended, when the
first and last runs started and ended, how long built candidates queued for a run,
and how much of the batch's wall had no run going at all. `--gantt` draws one line
per candidate (`b` build, `.` queued for a run, `R` run).

SMI.csv is `nvidia-smi --query-gpu=timestamp,index,utilization.gpu
--format=csv,noheader,nounits -lms 200`: the driver's own count of the time
a kernel ran in each sample period, independent of our bookkeeping. The busy
share is the mean over the middle 80% of the samples taken while the GPU had
work of ours (first to last nonzero sample), the pipeline full.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from kernelmill.records import read_bytes
from kernelmill.verify.progress import covered_seconds

GUARD = ("guard_inputs_s", "guard_profile_s", "guard_exchange_s", "guard_judge_s")
# waits inside a run's wall for a warm process: a spare still starting, the candidate's process warming up
WAITS = ("spare_wait_s", "cand_warm_wait_s")
# guard_exchange_s is a residual; the supervisor splits it into these (supervisor._exchange_parts)
EXCHANGE_PARTS = ("xchg_setup_s", "xchg_ready_s", "xchg_end_s", "xchg_outputs_s", "xchg_exit_s")
# a run's wall outside the supervisor's phases (runner._head_and_tail, supervisor.run_guarded) and the
# reference's work beside the candidate's checks (CUDA IPC: only its unhidden part is in guard_inputs_s)
AROUND = ("run_head_s", "sup_setup_s", "gpu_share_wait_s", "ref_overlap_s", "sup_close_s", "run_tail_s")
ORDER = ("build_s", "deferred_build_s", "load_s", "check_s", "time_s", *GUARD, *EXCHANGE_PARTS, "timing_lock_wait_s",
         "cand_warm_wait_s", "spare_warm_s", "spare_delay_s", "spare_gate_s", "spare_gpu_s", "spare_wait_s", *AROUND,
         "run_wall_s")


def read_verdicts(path: Path) -> list[dict]:
    rows = []
    for n, line in enumerate(read_bytes(path).decode("utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise SystemExit(f"{path}:{n}: not JSON ({exc.msg})") from None
    return rows


def phase_table(rows: list[dict]) -> dict:
    out: dict = {"candidates": len(rows), "phases": {}}
    for key in ORDER:
        vals = [float(r.get("phases", {}).get(key)) for r in rows
                if isinstance(r.get("phases", {}).get(key), (int, float))]
        if vals:
            out["phases"][key] = {"n": len(vals), "median": statistics.median(vals), "mean": statistics.fmean(vals),
                                  "max": max(vals), "sum": sum(vals)}
    shares, own = [], []
    for r in rows:
        ph = r.get("phases", {})
        wall = ph.get("run_wall_s")
        if isinstance(wall, (int, float)) and wall > 0 and any(k in ph for k in GUARD):
            guard = sum(float(ph.get(k, 0.0)) for k in GUARD)
            shares.append(guard / wall)
            # the run wall holds the waits for a warm process (a spare still starting, the
            # candidate's process warming up): they grow with the spare policy, not the guards
            work = wall - sum(float(ph.get(k, 0.0) or 0.0) for k in WAITS)
            if work > 0:
                own.append(guard / work)
    for key, vals in (("guard_share", shares), ("guard_share_of_work", own)):
        if vals:
            out[key] = {"n": len(vals), "median": statistics.median(vals), "mean": statistics.fmean(vals),
                        "max": max(vals), "within_10pct": sum(s <= 0.10 for s in vals)}
    status: dict[str, int] = {}
    for r in rows:
        status[r.get("status", "?")] = status.get(r.get("status", "?"), 0) + 1
    out["status"] = status
    out["run_compiles"] = sum(int(r.get("phases", {}).get("run_compiles", 0) or 0) for r in rows)
    return out


def timeline(rows: list[dict]) -> dict | None:
    """Where a batch's wall went, from the verdicts' measurement.timeline."""
    lines = []
    for r in rows:
        tl = (r.get("measurement") or {}).get("timeline")
        if isinstance(tl, dict) and tl.get("run"):
            lines.append((r.get("sample_id", "?"), tl))
    if not lines:
        return None
    builds = [s for _, tl in lines for s in tl.get("build", []) + tl.get("rebuild", [])]
    runs = [s for _, tl in lines for s in tl["run"]]
    queued = []
    for _, tl in lines:
        ready = max((e for _, e in tl.get("build", [])), default=0.0)
        queued.append(max(0.0, tl["run"][0][0] - ready))
    end = max(e for _, e in runs)
    # seconds of the batch with no run going (GPU run workers idle): before the first, and gaps
    idle = end - covered_seconds([tuple(r) for r in runs])
    return {"candidates": len(lines), "wall_s": end, "last_build_end_s": max((e for _, e in builds), default=None),
            "first_run_start_s": min(s for s, _ in runs), "last_run_start_s": max(s for s, _ in runs),
            "no_run_going_s": idle, "queued_for_run_s": {"median": statistics.median(queued), "max": max(queued)},
            "lines": lines}


def gantt(lines: list, width: int = 72) -> list[str]:
    end = max(e for _, tl in lines for spans in tl.values() for _, e in spans) or 1.0
    col = lambda t: min(width - 1, int(t / end * width))  # noqa: E731
    out = []
    for name, tl in sorted(lines, key=lambda x: x[1]["run"][0][0]):
        row = [" "] * width
        ready = 0.0
        for phase, mark in (("build", "b"), ("rebuild", "b"), ("run", "R")):
            for s, e in tl.get(phase, []):
                if phase == "run":
                    for i in range(col(ready), col(s)):
                        row[i] = "."
                for i in range(col(s), max(col(s) + 1, col(e))):
                    row[i] = mark
                ready = e
        out.append(f"{name[:40]:40s} |{''.join(row)}|")
    out.append(f"{'':40s}  0{'':{width - 8}s}{end:6.1f}s")
    return out


def smi_share(path: Path) -> dict:
    samples = []
    for line in path.read_text().splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) >= 3:
            try:
                samples.append(float(parts[2]))
            except ValueError:
                continue
    nz = [i for i, s in enumerate(samples) if s > 0]
    if not nz:
        return {"samples": len(samples), "busy_share": 0.0}
    window = samples[nz[0]:nz[-1] + 1]
    cut = len(window) // 10
    mid = window[cut:len(window) - cut] or window
    return {"samples": len(samples), "window_samples": len(window), "busy_share_full_pipeline": statistics.fmean(mid) / 100,
            "busy_share_whole_window": statistics.fmean(window) / 100}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("verdicts", type=Path)
    ap.add_argument("--smi", type=Path, default=None)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--gantt", action="store_true", help="one line per candidate: build, queue, run")
    a = ap.parse_args(argv)
    if not a.verdicts.is_file():
        print(f"no such file: {a.verdicts}", file=sys.stderr)
        return 2
    rows = read_verdicts(a.verdicts)
    t = phase_table(rows)
    tl = timeline(rows)
    if a.smi and a.smi.is_file():
        t["gpu"] = smi_share(a.smi)
    print(f"{t['candidates']} verdicts: {t['status']}; compiles in run processes: {t['run_compiles']}")
    print(f"{'phase':22s} {'n':>4s} {'median':>8s} {'mean':>8s} {'max':>8s} {'sum':>9s}")
    for k, v in t["phases"].items():
        print(f"{k:22s} {v['n']:4d} {v['median']:8.2f} {v['mean']:8.2f} {v['max']:8.2f} {v['sum']:9.1f}")
    for key, label in (("guard_share", "run wall"),
                       ("guard_share_of_work", "run wall less waits for a warm process")):
        if key in t:
            g = t[key]
            print(f"guard share of {label}: median {100 * g['median']:.1f}%, mean {100 * g['mean']:.1f}%, "
                  f"max {100 * g['max']:.1f}%, <=10%: {g['within_10pct']}/{g['n']}")
    if "gpu" in t:
        print("gpu (nvidia-smi):", json.dumps(t["gpu"]))
    if tl is not None:
        lb = tl["last_build_end_s"]
        print(f"timeline ({tl['candidates']} candidates): last run ended {tl['wall_s']:.1f} s; last build ended "
              f"{'-' if lb is None else f'{lb:.1f} s'}; runs started {tl['first_run_start_s']:.1f}-"
              f"{tl['last_run_start_s']:.1f} s; no run going {tl['no_run_going_s']:.1f} s; queued for a run after "
              f"the build: median {tl['queued_for_run_s']['median']:.1f} s, max {tl['queued_for_run_s']['max']:.1f} s")
        if a.gantt:
            print("\n".join(gantt(tl["lines"])))
        t["timeline"] = {k: v for k, v in tl.items() if k != "lines"}
    if a.json:
        a.json.write_text(json.dumps(t, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

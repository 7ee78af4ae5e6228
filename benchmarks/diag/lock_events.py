"""Which of kernelmill's holds of a GPU's lock kept its timings waiting (issue 14).

`gpulock.gpu_lock` appends one line per hold to `<lock file>.events` while that file
exists: the holder's PID, S (shared) or X (a timing), a label, and when it asked, got and
let go of the lock (time.monotonic). Labels: `timing` (a candidate's and its
reference's rounds), `run-pre` / `run-post` (a run's supervisor before and after its
timing, its candidate's process working under that hold), `spare-ctx|libs|kernels`
(a spare supervisor's warm-up: CUDA context; profiler, cuBLAS, cuDNN; the input-drawing
kernels) and `cand-ctx|libs|kernels` (the same in a candidate's process).

The /proc/locks sampler (gpu_lock_share.py) sees the same holds from outside, by PID
only; this file says whose they were. `summarize` gives over a window:
- `held`: per label, holds, seconds held, median hold, seconds waited;
- `cover`: the share of the window with any hold, a timing, shared holds only, and
  shared holds by warm-ups only (no run of a candidate among them);
- `timing_waits`: while timings waited for the lock, the seconds each label held it
  (several labels at once each count) and the seconds nobody held it;
- `runs_at_once`: of the time shared holds only were in, the share with 0, 1, 2... runs;
- `alone_s`: per label, the seconds its holds were the only ones on the GPU (what the wall
  would lose at most without them: session 28 found a run's own `run-pre` alone 58 s of a
  157 s cold run per GPU, a few candidates' first calls under `torch.compile`); `alone_top`:
  the longest single holds by that measure (pid, label, when it was taken, seconds alone).

    python benchmarks/diag/lock_events.py EVENTS [--start T --end T] [--out OUT.json]

`verify_throughput.py --lock-share` turns the file on for each pass and keeps this
summary over its steady window.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))
from kernelmill.verify.measure.gpulock import events_path  # noqa: E402 - no torch import
from kernelmill.verify.measure.gpulock import lend_path as gpulock_lend_path  # noqa: E402 - the same


class Hold(NamedTuple):
    pid: int
    exclusive: bool
    label: str
    asked: float
    held: float
    let_go: float
    acquired: bool


def start(lock: Path) -> Path:
    """Turn the events file of lock file `lock` on (emptied), and the lenders' notes beside it
    (`<lock>.lend`: verify/measure/gpu_lend.py); returns the events file's path."""
    path = events_path(lock)
    path.write_text("")
    lend_path(path).write_text("")
    return path


def lend_path(events: Path) -> Path:
    """The lenders' notes beside the lock whose events file is `events` (gpulock.lend_path)."""
    return gpulock_lend_path(events.with_name(events.name.removesuffix(".events")))


def read_lend(events: Path, stop: bool = False) -> dict:
    """What the lenders' notes beside events file `events` say: attempts `seen`, shares `lent`
    and their seconds, processes the driver `refused` to lock (`refused_answers`: how often each
    driver answer, e.g. 801), attempts that found `nothing` with CUDA to lock, `errors`; `lines` the
    notes themselves. With `stop`, the file is removed."""
    path = lend_path(events)
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return {}
    if stop:
        path.unlink(missing_ok=True)
    out = {"seen": 0, "lent": 0, "lent_s": 0.0, "refused": 0, "refused_answers": {}, "nothing": 0, "errors": [],
           "lines": lines}
    for line in lines:
        p = line.split(" ", 3)
        if len(p) < 3:
            continue
        kind, rest = p[2], p[3] if len(p) > 3 else ""
        if kind == "seen":
            out["seen"] += 1
            out["nothing"] += rest.endswith("cuda=[]")
        elif kind == "lent":
            out["lent"] += 1
            try:
                out["lent_s"] += float(rest.split()[-2])
            except (ValueError, IndexError):
                pass
        elif kind == "refused":
            out["refused"] += 1
            answer = rest.split()[1] if len(rest.split()) > 1 else "?"  # "PID ANSWER" (0.5.27; before: "PID")
            out["refused_answers"][answer] = out["refused_answers"].get(answer, 0) + 1
        elif kind == "error":
            out["errors"].append(rest[:300])
    out["lent_s"] = round(out["lent_s"], 3)
    return out


def read(path: Path, stop: bool = False) -> list[Hold]:
    """The holds in events file `path`; with `stop`, the file is removed (logging ends)."""
    out = []
    try:
        text = path.read_text()
    except OSError:
        return out
    if stop:
        path.unlink(missing_ok=True)
    for line in text.splitlines():
        p = line.split()
        if len(p) != 7:
            continue
        try:
            out.append(Hold(int(p[0]), p[1] == "X", p[2], float(p[3]), float(p[4]), float(p[5]), p[6] == "1"))
        except ValueError:
            continue
    return out


def _is_run(label: str) -> bool:
    return label.startswith("run")


def _segments(holds: list[Hold], start: float, end: float):
    """(t0, t1, the holds in force over it) for each stretch between change points."""
    held = [h for h in holds if h.acquired and h.let_go > start and h.held < end]
    cuts = sorted({start, end, *(max(start, min(end, t)) for h in held for t in (h.held, h.let_go))})
    for t0, t1 in zip(cuts, cuts[1:]):
        if t1 > t0:
            yield t0, t1, [h for h in held if h.held <= t0 and h.let_go >= t1]


def busy_by_state(holds: list[Hold], samples: list[tuple[float, float]], start: float, end: float) -> dict:
    """nvidia-smi's busy share (percent, mean of the samples) while a timing held the GPU, while
    only shared work did, and while nothing did, over [start, end]: how much of each the GPU
    spent running kernels (session 27: 40% under a timing, 17-30% under shared work only)."""
    state = [(t0, t1, "timing" if any(h.exclusive for h in now) else "shared_only" if now else "nothing")
             for t0, t1, now in _segments(holds, start, end)]  # in time order
    got: dict[str, list[float]] = defaultdict(list)
    k = 0
    for t, u in sorted(samples):
        if not start <= t <= end:
            continue
        while k + 1 < len(state) and state[k][1] < t:
            k += 1
        if state and state[k][0] <= t <= state[k][1]:
            got[state[k][2]].append(u)
    return {name: {"mean_pct": round(sum(v) / len(v), 1), "samples": len(v)} for name, v in sorted(got.items())}


def summarize(holds: list[Hold], start: float | None = None, end: float | None = None) -> dict:
    if not holds:
        return {"holds": 0}
    start = min(h.asked for h in holds) if start is None else start
    end = max(h.let_go for h in holds) if end is None else end
    span = max(end - start, 1e-9)
    inside = [h for h in holds if h.let_go > start and h.asked < end]
    by_label: dict[str, list[Hold]] = defaultdict(list)
    for h in inside:
        by_label[h.label].append(h)
    held = {}
    for label, hs in sorted(by_label.items()):
        lengths = sorted(min(h.let_go, end) - max(h.held, start) for h in hs if h.acquired)
        held[label] = {"holds": len(hs), "held_s": round(sum(lengths), 3),
                       "median_hold_s": round(lengths[len(lengths) // 2], 4) if lengths else None,
                       "waited_s": round(sum(h.held - h.asked for h in hs), 3)}
    cover = defaultdict(float)
    runs_at_once: dict[int, float] = defaultdict(float)
    for t0, t1, now in _segments(inside, start, end):
        d = t1 - t0
        if not now:
            continue
        cover["any"] += d
        if any(h.exclusive for h in now):
            cover["timing"] += d
            continue
        cover["shared_only"] += d
        runs = sum(1 for h in now if _is_run(h.label))
        runs_at_once[runs] += d
        if runs == 0:
            cover["warm_ups_only"] += d
    alone: dict[str, float] = defaultdict(float)
    alone_hold: dict[Hold, float] = defaultdict(float)
    for t0, t1, now in _segments(inside, start, end):
        if now and len({h.label for h in now}) == 1:
            alone[now[0].label] += t1 - t0
            if len(now) == 1:
                alone_hold[now[0]] += t1 - t0
    top = sorted(alone_hold.items(), key=lambda kv: -kv[1])[:8]
    waits: dict[str, float] = defaultdict(float)
    for t in (h for h in inside if h.exclusive):
        w0, w1 = max(t.asked, start), min(t.held, end)
        if w1 <= w0:
            continue
        waits["total"] += w1 - w0
        for t0, t1, now in _segments(inside, w0, w1):
            others = [h for h in now if h.pid != t.pid]
            if not others:
                waits["nobody"] += t1 - t0
            for label in {h.label for h in others}:
                waits[label] += t1 - t0
    shared = cover.get("shared_only", 0.0)
    return {
        "window_s": round(span, 2), "holds": len(inside),
        "timings": sum(1 for h in inside if h.exclusive and h.acquired),
        "cover": {k: round(v / span, 4) for k, v in cover.items()},
        "held": held,
        "timing_waits_s": {k: round(v, 3) for k, v in sorted(waits.items(), key=lambda kv: -kv[1])},
        "runs_at_once": {str(k): round(v / shared, 4) for k, v in sorted(runs_at_once.items())} if shared else {},
        "alone_s": {k: round(v, 3) for k, v in sorted(alone.items(), key=lambda kv: -kv[1])},
        "alone_top": [{"pid": h.pid, "label": h.label, "held": round(h.held, 3), "alone_s": round(v, 3)} for h, v in top],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("events", help="a lock's events file (<lock>.events)")
    ap.add_argument("--start", type=float, help="window start (time.monotonic); default the first hold")
    ap.add_argument("--end", type=float, help="window end; default the last hold's end")
    ap.add_argument("--out", help="write the summary here (JSON)")
    args = ap.parse_args()
    holds = read(Path(args.events))
    if not holds:
        raise SystemExit(f"{args.events}: no holds (is it an events file written while a verification ran?)")
    result = summarize(holds, args.start, args.end)
    print(json.dumps(result, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()

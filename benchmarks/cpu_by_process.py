"""Where a command's CPU time goes, by kind of process (issue 14: a cold batch is CPU-bound).

    python benchmarks/cpu_by_process.py --out cpu.json -- kernelmill verify ...

Runs the command and samples its process tree from /proc every `--interval` seconds:
each process's CPU time (utime + stime), its name and its parent. A process is put in
a kind by its name (kernelmill's workers name themselves: ``km build``, ``km standby``,
``km candidate``, ``km zygote run``, ...; verify/process/loading.name_process), by its
command line, or else by its nearest ancestor's kind; a compiler (cc1plus, nvcc, cicc,
ptxas, ...) is counted as ``compiler`` under the kind of the process that started it.

A process's CPU after its last sample is not seen (at most one interval of it). The
report says how much of the tree's CPU the samples saw: the total from the kernel
(RUSAGE_CHILDREN, every descendant once reaped) against the sum of the samples.

Written here because no tool on the device does this: `pidstat` and `perf` are not
installed there, and `psutil` would only save the /proc parsing.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from collections import defaultdict

TICK = os.sysconf("SC_CLK_TCK")
COMPILERS = {"cc1plus", "cc1", "as", "ld", "collect2", "g++", "c++", "gcc", "cc", "nvcc", "cicc", "ptxas",
             "fatbinary", "nvlink", "cudafe++", "ninja", "x86_64-linux-gn", "ld.bfd", "ld.gold", "sh"}
# command-line marks of processes that do not name themselves, first match wins
CMDLINE_KINDS = (
    ("kernelmill.verify.build.inline_build", "km header builder"),
    ("kernelmill.verify.process.worker", None),  # km <its first argument>
    ("kernelmill.verify.process.candidate", "km candidate"),
    ("kernelmill.verify.pools.zygote", "km zygote"),
    ("import json, torch", "km gpu probe"),
    ("vs_kernelbench", "benchmark driver"),
    ("kernelmill", "km harness"),
)


def _read_stat(pid: str):
    try:
        with open(f"/proc/{pid}/stat") as fh:
            raw = fh.read()
    except OSError:
        return None
    head, rest = raw.rsplit(")", 1)
    fields = rest.split()
    comm = head.split("(", 1)[1]
    return comm, int(fields[1]), int(fields[11]) + int(fields[12])  # ppid, utime + stime (ticks)


def _cmdline(pid: str) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def own_kind(comm: str, cmdline: str) -> str | None:
    """The kind a process says it is (its name or command line), or None."""
    if comm in COMPILERS:
        return "compiler"
    if comm.startswith("km "):
        return comm
    for mark, kind in CMDLINE_KINDS:
        if mark in cmdline:
            if kind is None:
                after = cmdline.split(mark, 1)[1].split()
                return "km " + (after[0] if after else "worker")
            return kind
    return None


class Tree:
    """Every process seen below `root`: its kind and the most CPU seen for it."""

    def __init__(self, root: int):
        self.root = root
        self.procs: dict[int, dict] = {}  # pid -> {comm, ppid, own, kind, ticks}

    def kind_of(self, pid: int) -> str:
        p = self.procs.get(pid)
        if p is None:
            return "other"
        if p["kind"] is None:
            parent = self.kind_of(p["ppid"]) if p["ppid"] in self.procs else "other"
            p["kind"] = parent
        return p["kind"]

    def sample(self) -> None:
        stats = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                st = _read_stat(entry)
                if st is not None:
                    stats[int(entry)] = st
        children = defaultdict(list)
        for pid, (_, ppid, _) in stats.items():
            children[ppid].append(pid)
        todo, below = [self.root], []
        while todo:
            pid = todo.pop()
            below.append(pid)
            todo.extend(children.get(pid, ()))
        for pid in below:
            comm, ppid, ticks = stats[pid]
            p = self.procs.get(pid)
            if p is None:
                p = self.procs[pid] = {"comm": comm, "ppid": ppid, "own": own_kind(comm, _cmdline(str(pid))),
                                       "kind": None, "ticks": 0}
            elif p["comm"] != comm:  # it ran exec, or a forked worker named itself: its kind is its last
                p["comm"], p["own"] = comm, own_kind(comm, _cmdline(str(pid)))
            p["ticks"] = max(p["ticks"], ticks)

    def resolve(self) -> None:
        for pid, p in self.procs.items():
            own = p["own"]
            if own == "compiler":
                owner = self._owner(p["ppid"])
                p["kind"] = f"compiler ({owner})"
            elif own is not None:
                p["kind"] = own
        for pid in self.procs:
            self.kind_of(pid)

    def _owner(self, pid: int) -> str:
        while pid in self.procs:
            own = self.procs[pid]["own"]
            if own is not None and own != "compiler":
                return own
            pid = self.procs[pid]["ppid"]
        return "other"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="JSON report: CPU seconds by kind, and by kind per time bucket")
    ap.add_argument("--interval", type=float, default=0.2, help="seconds between samples")
    ap.add_argument("--bucket", type=float, default=5.0, help="seconds per bucket of the time series")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="the command, after --")
    args = ap.parse_args()
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not cmd:
        ap.error("no command given (put it after --)")
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd)
    tree = Tree(proc.pid)
    series: list[tuple[float, dict[int, int]]] = []
    while proc.poll() is None:
        now = time.monotonic() - t0
        tree.sample()
        series.append((now, {pid: p["ticks"] for pid, p in tree.procs.items()}))
        time.sleep(args.interval)
    wall = time.monotonic() - t0
    kernel = resource.getrusage(resource.RUSAGE_CHILDREN)
    tree.resolve()
    by_kind: dict[str, dict] = defaultdict(lambda: {"cpu_s": 0.0, "processes": 0})
    for p in tree.procs.values():
        by_kind[p["kind"]]["cpu_s"] += p["ticks"] / TICK
        by_kind[p["kind"]]["processes"] += 1
    buckets: dict[int, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    prev: dict[int, int] = {}
    for now, ticks in series:
        b = int(now // args.bucket)
        for pid, t in ticks.items():
            d = t - prev.get(pid, 0)
            if d:
                buckets[b][tree.procs[pid]["kind"]] += d / TICK
        prev = ticks
    seen = sum(k["cpu_s"] for k in by_kind.values())
    total = kernel.ru_utime + kernel.ru_stime
    report = {
        "command": cmd, "exit": proc.returncode, "wall_s": round(wall, 2), "cores": os.cpu_count(),
        "cpu_s_kernel": round(total, 1), "cpu_s_sampled": round(seen, 1),
        "sampled_share": round(seen / total, 3) if total else None,
        "by_kind": {k: {"cpu_s": round(v["cpu_s"], 1), "processes": v["processes"]}
                    for k, v in sorted(by_kind.items(), key=lambda kv: -kv[1]["cpu_s"])},
        "bucket_s": args.bucket,
        "series": [{"t": b * args.bucket, **{k: round(v, 1) for k, v in sorted(kinds.items())}}
                   for b, kinds in sorted(buckets.items())],
    }
    with open(args.out, "w") as fh:
        json.dump(report, fh, indent=1)
    print(f"cpu_by_process: {wall:.1f} s wall, {total:.0f} CPU-s in the tree ({seen:.0f} sampled, "
          f"{100 * seen / max(total, 1e-9):.0f}%), {os.cpu_count()} cores", file=sys.stderr)
    for k, v in report["by_kind"].items():
        print(f"  {v['cpu_s']:8.1f} CPU-s  {v['processes']:5d} processes  {k}", file=sys.stderr)
    sys.exit(proc.returncode)


if __name__ == "__main__":
    main()

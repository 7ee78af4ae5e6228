"""One-off check of 0.5.14's identifiers process on the CPU VM (issue 40): seconds from the runner asking
(`build_prepare.start_identifiers`) to the torch header's identifiers being in the cache, with the 0.5.13
process (it imports torch to read torch's flags) and the 0.5.14 one (the caller works the flags out,
`identifier_jobs`; the process imports no torch), each beside a storm of STORM processes importing torch
(a cold run's start), alternated. A C++ flag set (the binding unit's), so no CUDA is needed.

    PYTHONPATH=src python docs/results/session_2026-11-30d/maker_storm.py --storm 6 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kernelmill.verify.build import build_prepare
from kernelmill.verify.build.buildcache import BuildCache

SPECS = [(False, (), ())]


def once(mode: str, storm: int) -> float:
    with tempfile.TemporaryDirectory(prefix="km-maker-") as tmp:
        root = Path(tmp) / "build"
        jobs = build_prepare.identifier_jobs(SPECS, os.environ.get("TORCH_CUDA_ARCH_LIST", "")) if mode == "jobs" else None
        others = [subprocess.Popen([sys.executable, "-c", "import torch, torch.utils.cpp_extension"])
                  for _ in range(storm)]
        t0 = time.perf_counter()
        proc = build_prepare.start_identifiers(root, SPECS, jobs=jobs)
        key = jobs[0]["key"] if jobs else None
        cache = BuildCache(root)
        while True:
            if key is None:  # the 0.5.13 process: its key is the one a build of these flags computes
                done = (root / "idents").is_dir() and any((root / "idents").rglob("idents.txt"))
            else:
                done = cache.get("idents", key) is not None
            if done or proc.poll() not in (None, 0):
                break
            time.sleep(0.02)
        seconds = time.perf_counter() - t0
        proc.wait()
        for p in others:
            p.wait()
        return round(seconds, 2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--storm", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    out = {"torch": [], "jobs": []}
    for _ in range(args.rounds):
        for mode in ("torch", "jobs"):
            out[mode].append(once(mode, args.storm))
            print(json.dumps({"mode": mode, "seconds": out[mode][-1], "load": os.getloadavg()[0]}), flush=True)
    print(json.dumps({"storm": args.storm, **out}))


if __name__ == "__main__":
    main()

"""How long `Sandbox.watch` takes to notice that a phase process ended: the median
wall time of `Sandbox.run` on a Python process that sleeps 0.3 s (interpreter start
included). Before the pidfd wait, the watch loop slept up to 0.1 s between polls.

    PYTHONPATH=src python benchmarks/diag/watch_exit.py --runs 10
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from kernelmill.verify.sandbox import Sandbox


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--sleep", type=float, default=0.3, help="seconds the watched process sleeps")
    args = ap.parse_args()
    sandbox = Sandbox(16, 128, 8192, False)
    folder = Path(tempfile.mkdtemp(prefix="km-watch-"))
    walls = []
    for _ in range(args.runs):
        t0 = time.monotonic()
        res = sandbox.run([sys.executable, "-c", f"import time; time.sleep({args.sleep})"], folder,
                          {"PATH": "/usr/bin:/bin"}, timeout=60)
        walls.append(time.monotonic() - t0)
        if res.returncode != 0:
            raise SystemExit(f"the watched process failed: {res.stderr[-500:]}")
    print(f"median wall of a {args.sleep:g} s process under Sandbox.run: {statistics.median(walls):.3f} s "
          f"(min {min(walls):.3f}, max {max(walls):.3f}, {args.runs} runs)")


if __name__ == "__main__":
    main()

"""How fast the correctness comparison judges a large output on the CPU (verify/measure/correctness.py).

A run whose reference's answers do not fit beside the GPU's work keeps them in host memory and
compares there (supervisor._placed, `measurement.answers: "host"`), with the harness's one torch
thread: on issue 40's cold run of cuda-l1 (session 25) the judge of a 1.07 GB output took 96 s.
This times `compare(reference, candidate)` on float32 outputs of --elements elements in three cases:
bitwise equal (one cheap pass), close (every place compared within tolerance: the usual case for an
honest kernel with another summation order), and close with NaN and infinities in both. With
--against FILE (a copy of correctness.py from another commit) the same cases run through that
file's chunk tally too, alternated, so both figures share the machine's load.

    python benchmarks/compare_speed.py --elements 67108864 --repeat 3 [--threads 1] [--against old.py]
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from kernelmill.verify.measure import correctness  # noqa: E402


def cases(n: int, seed: int = 0) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(seed)
    r = torch.randn(n, generator=g)
    close = r + torch.randn(n, generator=g) * 1e-6
    odd_r, odd_c = r.clone(), close.clone()
    for t in (odd_r, odd_c):
        t[:: max(1, n // 7)] = float("nan")
        t[3 :: max(1, n // 5)] = float("inf")
    return {"equal": (r, r.clone()), "close": (r, close), "close_nonfinite": (odd_r, odd_c)}


def tally_of(path: Path):
    """The `_tally` of another correctness.py, run with this one's chunking."""
    src = path.read_text()
    body = src[src.index("def _tally("):src.index("def _unravel(")]
    ns = {"torch": torch, "_Tally": correctness._Tally}
    exec(compile(body, str(path), "exec"), ns)  # noqa: S102 - a file the user names
    return ns["_tally"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--elements", type=int, default=1 << 26, help="float32 elements per output (default 67M, 256 MB)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1, help="torch threads (the harness judges with 1)")
    ap.add_argument("--against", type=Path, help="another correctness.py whose chunk tally is timed alongside")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    versions = {"current": correctness._tally}
    if args.against:
        versions["against"] = tally_of(args.against)
    data = cases(args.elements)
    rows = []
    current = correctness._tally
    try:
        for rep in range(args.repeat):
            for case, (r, c) in data.items():
                for name, tally in versions.items():
                    correctness._tally = tally
                    t0 = time.perf_counter()
                    cmp = correctness.compare(r, c)
                    secs = time.perf_counter() - t0
                    rows.append({"repeat": rep, "case": case, "version": name, "seconds": round(secs, 3),
                                 "correct": cmp.correct, "max_abs_err": cmp.max_abs_err})
                    print(f"{rep} {case:16s} {name:8s} {secs:7.2f} s  {args.elements * 4 / 2**30 / secs:6.2f} GiB/s"
                          f"  correct={cmp.correct} max_abs={cmp.max_abs_err:.3g}", flush=True)
    finally:
        correctness._tally = current
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:.0f} MB (inputs {3 * 2 * args.elements * 4 / 2**20:.0f} MB)")
    if args.json:
        args.json.write_text(json.dumps({"elements": args.elements, "threads": args.threads, "rows": rows,
                                         "peak_rss_mb": round(peak)}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How much of the time a GPU had kernelmill work on it, sampled from outside (issue 14).

Reads /proc/locks every `--every-ms` for the GPU's lock file (verify/measure/gpulock.py):
a flock held exclusively is a timing (a candidate's and its reference's rounds), one held
shared is other GPU work of ours (a spare opening its context, inputs drawn, the reference
run, a candidate checked). Nothing of the verifier is imported or asked: the kernel's lock
table is the witness, so the figure checks `verify_throughput.py`'s own `gpu_busy_share`
(which counts a run as busy from its start to its end, host work included).

Run it beside a verification; it stops on SIGINT/SIGTERM or after `--seconds`, then prints
(and with --out writes) the shares over the whole sampling window and over the steady
window (from the first sample with any holder to the last one):

    python benchmarks/diag/gpu_lock_share.py --device cuda:0 --out lock.json &  SAMPLER=$!
    python benchmarks/verify_throughput.py ...; kill -INT $SAMPLER; wait $SAMPLER

Where `nvidia-smi` exists, run `nvidia-smi --query-gpu=utilization.gpu --format=csv -lms 200`
beside it for the driver's own figure (a kernel running in the last sample period).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))
from kernelmill.verify.measure.gpulock import flock_holders, lock_path  # noqa: E402 - no torch import


def holders(inode: int) -> tuple[int, int]:
    """(shared holders, exclusive holders) of the flock on `inode`; queued waiters not counted."""
    access = [a for _, a in flock_holders(inode)]
    return len(access) - access.count("WRITE"), access.count("WRITE")


def shares(samples: list[tuple[float, int, int]]) -> dict:
    n = len(samples)
    if not n:
        return {"samples": 0}
    busy = sum(1 for _, s, e in samples if s or e)
    timed = sum(1 for _, _, e in samples if e)
    return {"samples": n, "seconds": round(samples[-1][0] - samples[0][0], 2),
            "any_share": round(busy / n, 4), "timing_share": round(timed / n, 4),
            "shared_only_share": round((busy - timed) / n, 4)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda:0", help="the device string the verifier uses (cuda, cuda:1)")
    ap.add_argument("--visible", default=None,
                    help="the CUDA_VISIBLE_DEVICES the verifier's run workers have (a runner sets it per GPU: "
                         "'0' for GPU 0); default this process's")
    ap.add_argument("--every-ms", type=float, default=20.0, help="sampling period")
    ap.add_argument("--seconds", type=float, default=3600.0, help="stop after this long at most")
    ap.add_argument("--out", help="write the shares and the samples' summary here (JSON)")
    ap.add_argument("--samples", action="store_true",
                    help="also write every sample (time.monotonic, shared, exclusive) to --out, for windows of one's own")
    args = ap.parse_args()

    env = dict(os.environ) if args.visible is None else {**os.environ, "CUDA_VISIBLE_DEVICES": args.visible}
    path = lock_path(args.device, env)
    if path is None:
        raise SystemExit(f"{args.device} has no GPU lock (a CPU device)")
    stop = []
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    samples: list[tuple[float, int, int]] = []
    t_end = time.monotonic() + args.seconds
    inode = None
    while not stop and time.monotonic() < t_end:
        if inode is None:  # the verifier creates the file when it first takes the lock
            try:
                inode = os.stat(path).st_ino
            except FileNotFoundError:
                pass
        if inode is not None:
            s, e = holders(inode)
            samples.append((time.monotonic(), s, e))
        time.sleep(args.every_ms / 1000)
    active = [i for i, (_, s, e) in enumerate(samples) if s or e]
    steady = samples[active[0]:active[-1] + 1] if active else []
    result = {"device": args.device, "lock": str(path), "every_ms": args.every_ms,
              "whole": shares(samples), "steady": shares(steady)}
    print(json.dumps(result, indent=1))
    if args.samples:
        result["samples"] = [[round(t, 4), sh, ex] for t, sh, ex in samples]
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()

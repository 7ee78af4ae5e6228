"""How long each GPU section of a process's warm-up holds the GPU lock, on a quiet GPU (issue 14).

A spare supervisor and a candidate's process each warm up (guards/trace.warm_cuda) in
sections that hold the lock shared: "ctx" (the CUDA context), "libs" (the profiled
call, cuBLAS, cuDNN), "kernels" (the harness's drawing or checking kernels). A timing
that comes meanwhile waits for the section in flight. Each of `--processes` fresh
interpreters (one after the other, nothing else on the GPU) imports torch and warms up
as a spare does; this prints the median seconds of each section and of the parts of
"libs" timed apart in a further process each (the profiled call, the first matmul, the
first convolution).

    python benchmarks/diag/warm_sections.py --processes 5 [--out OUT.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"

WARM = """
import json, sys, time, contextlib, torch
from kernelmill.verify.guards import trace
times = {}
@contextlib.contextmanager
def section(part):
    t0 = time.perf_counter()
    yield
    times[part] = times.get(part, 0.0) + time.perf_counter() - t0
which = sys.argv[1]
trace.warm_cuda(torch.device("cuda"), section, draws=which == "draws", checks=which == "checks")
print(json.dumps(times))
"""

PARTS = """
import json, time, torch
from kernelmill.verify.guards import trace
d = torch.device("cuda")
out = {}
def step(name, fn):
    t0 = time.perf_counter(); fn(); torch.cuda.synchronize(); out[name] = time.perf_counter() - t0
step("ctx", lambda: torch.zeros(1, device=d))
with trace.kineto_profile(cuda=False):
    torch.ones(8) * 2
step("profiled_call", lambda: trace.profile_call(lambda: torch.ones(8, device=d) * 2, d))
a = torch.randn(256, 256, device=d)
step("first_matmul", lambda: (a @ a).sum().item())
step("first_conv", lambda: torch.nn.functional.conv2d(a[None, None], a[None, None, :3, :3]).sum().item())
print(json.dumps(out))
"""


def _run(code: str, *argv: str) -> dict:
    env = {"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"}
    import os

    env.update({k: v for k, v in os.environ.items() if k.startswith(("CUDA", "LD_LIBRARY"))})
    p = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, env=env, timeout=300)
    if p.returncode:
        raise SystemExit(p.stderr[-2000:])
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--processes", type=int, default=5)
    ap.add_argument("--out")
    args = ap.parse_args()
    result = {}
    for which in ("draws", "checks"):  # a spare supervisor's warm-up, a candidate's process's
        rows = [_run(WARM, which) for _ in range(args.processes)]
        result[which] = {k: round(statistics.median(r.get(k, 0.0) for r in rows), 4) for k in rows[0]}
    rows = [_run(PARTS) for _ in range(args.processes)]
    result["parts"] = {k: round(statistics.median(r[k] for r in rows), 4) for k in rows[0]}
    print(json.dumps(result, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()

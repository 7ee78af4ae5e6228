"""How long each GPU section of a process's warm-up holds the GPU lock, on a quiet GPU (issue 14).

A spare supervisor and a candidate's process each warm up (guards/trace.warm_cuda) in
sections that hold the lock shared: "ctx" (the CUDA context), "libs" (the profiled
call, cuBLAS, cuDNN), "kernels" (the harness's drawing or checking kernels). A timing
that comes meanwhile waits for the section in flight. Each of `--processes` fresh
interpreters (one after the other, nothing else on the GPU) imports torch and warms up
as a spare does; this prints the median seconds of each section and of the parts of
"libs" timed apart in a further process each (the profiled call, the first matmul, the
first convolution). Then where a context's time goes: `torch.cuda.init()` (the driver's
start-up) apart from the first tensor (the context itself), whether the first made a
context, the first convolution with cuDNN's libraries loaded beforehand (host work), and
`--parallel` processes opening their contexts at the same instant (does the driver
take them one at a time?).

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


INIT = """
import ctypes, glob, json, os, sys, time
t_start = float(sys.argv[1])
import torch
preload = sys.argv[2] == "preload"
out = {}
if preload:  # cuDNN's sub-libraries, dlopened ahead (host work): what is left of the first convolution
    t0 = time.perf_counter()
    import nvidia.cudnn
    libs = sorted(glob.glob(os.path.join(list(nvidia.cudnn.__path__)[0], "lib", "libcudnn*.so*")))
    for lib in libs:
        try:
            ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)
        except OSError as exc:
            out.setdefault("preload_errors", []).append(str(exc)[:120])
    out["preload_s"] = time.perf_counter() - t0
    out["preloaded"] = len(libs)
while time.monotonic() < t_start:
    time.sleep(0.001)
d = torch.device("cuda")
t0 = time.perf_counter(); torch.cuda.init(); out["cuda_init"] = time.perf_counter() - t0
out["context_after_init"] = bool(torch._C._cuda_hasPrimaryContext(0))
t0 = time.perf_counter(); torch.zeros(1, device=d); torch.cuda.synchronize(); out["first_tensor"] = time.perf_counter() - t0
a = torch.randn(256, 256, device=d); torch.cuda.synchronize()
t0 = time.perf_counter(); torch.nn.functional.conv2d(a[None, None], a[None, None, :3, :3]).sum().item()
out["first_conv"] = time.perf_counter() - t0
print(json.dumps(out))
"""


def _together(n: int, preload: bool) -> list[dict]:
    """`n` processes that start their CUDA steps at the same monotonic instant."""
    import os
    import time

    env = {"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin",
           **{k: v for k, v in os.environ.items() if k.startswith(("CUDA", "LD_LIBRARY"))}}
    t_start = time.monotonic() + (8.0 if n > 1 else 0.0)  # after every interpreter imported torch
    procs = [subprocess.Popen([sys.executable, "-c", INIT, str(t_start), "preload" if preload else "-"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) for _ in range(n)]
    rows = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        if p.returncode:
            raise SystemExit(err[-2000:])
        rows.append(json.loads(out.strip().splitlines()[-1]))
    return rows


def _med(rows: list[dict]) -> dict:
    keys = [k for k, v in rows[0].items() if isinstance(v, (int, float)) and not isinstance(v, bool)]
    out = {k: round(statistics.median(r[k] for r in rows), 4) for k in keys}
    out.update({k: [r[k] for r in rows] for k, v in rows[0].items() if isinstance(v, bool)})
    return out


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
    ap.add_argument("--parallel", type=int, default=4)
    ap.add_argument("--out")
    args = ap.parse_args()
    result = {}
    for which in ("draws", "checks"):  # a spare supervisor's warm-up, a candidate's process's
        rows = [_run(WARM, which) for _ in range(args.processes)]
        result[which] = {k: round(statistics.median(r.get(k, 0.0) for r in rows), 4) for k in rows[0]}
    rows = [_run(PARTS) for _ in range(args.processes)]
    result["parts"] = {k: round(statistics.median(r[k] for r in rows), 4) for k in rows[0]}
    result["alone"] = _med([_together(1, False)[0] for _ in range(args.processes)])
    result["alone_preloaded"] = _med([_together(1, True)[0] for _ in range(args.processes)])
    together = _together(args.parallel, False)
    result[f"together_{args.parallel}"] = {**_med(together), "first_tensor_each": [round(r["first_tensor"], 3) for r in together]}
    print(json.dumps(result, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()

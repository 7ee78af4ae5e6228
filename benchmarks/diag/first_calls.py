"""What a fresh process pays for its first cuBLAS/cuDNN call, `import triton` and one
nvidia-smi query: the run-time costs that issue 14's ninth session moved into the
warm-up (guards/trace.warm_cuda, environment.warm_facts, environment.gpu_state_query).

    python benchmarks/diag/first_calls.py --processes 3     # on a GPU machine

Each process, in order: import torch, open the CUDA context, then times each step
twice (the second time is what a warmed process pays). Prints one JSON line per
process and the medians."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CHILD = r"""
import json, time
t = {}
t0 = time.perf_counter(); import torch; t["import_torch"] = time.perf_counter() - t0
dev = torch.device("cuda")
t0 = time.perf_counter(); torch.zeros(1, device=dev); torch.cuda.synchronize(); t["context"] = time.perf_counter() - t0
from kernelmill.verify.guards import trace
from kernelmill.verify.measure import environment
for k in (1, 2):
    t0 = time.perf_counter(); trace.warm_thread_pools(dev); torch.cuda.synchronize(); t[f"cublas_cudnn_{k}"] = time.perf_counter() - t0
t0 = time.perf_counter(); environment._software(); t["import_triton"] = time.perf_counter() - t0
t0 = time.perf_counter(); environment._gpu(0); t["smi_fixed"] = time.perf_counter() - t0
for k in (1, 2):
    t0 = time.perf_counter(); environment._gpu_state(environment.gpu_state_query(dev)); t[f"smi_state_{k}"] = time.perf_counter() - t0
print(json.dumps({k: round(v, 4) for k, v in t.items()}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--processes", type=int, default=3, help="fresh processes, one after another")
    args = ap.parse_args()
    rows = []
    for _ in range(args.processes):
        out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=300)
        if out.returncode:
            raise SystemExit(out.stderr[-2000:])
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        print(json.dumps(rows[-1]), flush=True)
    med = {k: sorted(r[k] for r in rows)[len(rows) // 2] for k in rows[0]}
    print("medians (s):", json.dumps(med))


if __name__ == "__main__":
    main()

#!/usr/bin/env bash
# The CUDA IPC exchange (verify/process/cuda_ipc.py) on one GPU, in one call (~9 min on an H100):
#   1. its GPU tests (two processes, a lying description, verdicts equal to the file exchange);
#   2. the guards' cost on the builtin suite's correct candidates, exchange through files
#      against CUDA IPC (benchmarks/guards_cost.py);
# then, if time is left, issue 14's subset with KM_EXCHANGE=auto (benchmarks/diag/issue14_device.sh).
#   OUT=$OUT bash benchmarks/diag/ipc_device.sh
set -uo pipefail
OUT=${OUT:?set OUT}
mkdir -p "$OUT"
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
timeout 180 python -m pytest -m gpu -q tests/verify/test_cuda_ipc.py -x 2>&1 | tail -15
timeout 330 python benchmarks/guards_cost.py --device cuda --languages cuda,triton,torch \
  --levels standard:file,standard:auto --json "$OUT/guards_ipc.json" 2>&1 | tail -12

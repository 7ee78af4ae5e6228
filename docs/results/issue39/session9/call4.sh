#!/bin/bash
# Session 9, device call 4 (nvidia-h200): is the process-to-process spread of the KernelBench-
# convention host path a matter of where the process runs? Two launch-bound references, four
# fresh plain processes, four pinned to one GPU-local core, two pinned to the GPU-local set.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
{ nvidia-smi -L; nvidia-smi topo -m; nproc; lscpu | grep -iE "numa|model name|mhz|socket"; date; } > $OUT/env.txt 2>&1
python3 benchmarks/diag/kb_host_path.py --external .dev/kernels.jsonl --rows cudal1-a100-L1-100,cudal1-a100-L2-14 \
  --conditions plain,pin_one,plain,pin_one,plain,pin_one,plain,pin_one,pin_local,pin_local --out $OUT/pinning.json > $OUT/pinning.log 2>&1
cat $OUT/env.txt $OUT/pinning.log

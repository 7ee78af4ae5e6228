#!/bin/bash
# Session 25, call d (a fresh nvidia-h200; carry `.kb .dev/kernels.jsonl`): part 1/4's kernelmill side alone, cold,
# with the fit check beside the run (the code after call b1's; KernelBench's side is b1's, not run again).
export PYTHONUNBUFFERED=1 XDG_CACHE_HOME=/tmp/xdg PYTHONPATH=$PWD/src
mkdir -p $OUT/d; { nvidia-smi -L; nproc; date; uptime; } > $OUT/d/env.txt 2>&1
timeout -k 10 ${KM_S:-200} python3 benchmarks/vs_kernelbench.py --external .dev/kernels.jsonl --part 1/4 --gpus 1 \
  --kernelbench .kb --out $OUT/d/vs_kb_1of4_km.json --work /tmp/vskb_d --skip-kernelbench > $OUT/d/log_d.txt 2>&1
echo "rc $? $(uptime)" >> $OUT/d/env.txt
grep -E "since the command|kernelmill verify:|warning" $OUT/d/log_d.txt; cat $OUT/d/env.txt

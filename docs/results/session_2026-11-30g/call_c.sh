#!/bin/bash
# 0.5.17's crowded-GPU test, then issue 44 item 4 on the GPU: the external pairs with a launch configuration run by the evaluator
# (the reference CUDA as its own candidate: run, check its outputs, no crash) and each configured
# launch once under compute-sanitizer's memcheck. Carry `.dev` (.dev/ext_pairs.jsonl: made on the
# CPU by `benchmarks/ptx_task_configs.py --nvcc --rows ../shared/external/cuda-l1/kernels.jsonl
# --pairs-out .dev/ext_pairs.jsonl`, session_2026-11-30c):
#   bash docs/results/session_2026-11-30g/call_c.sh
export PYTHONUNBUFFERED=1 XDG_CACHE_HOME=/tmp/xdg PYTHONPATH=$PWD/src
K="python3 -m kernelmill.cli"; B=/tmp/kmb; T0=$(date +%s); mkdir -p $OUT/c
{ nvidia-smi -L; nproc; date; git log --oneline -1 2>/dev/null; uptime; } > $OUT/c/env.txt 2>&1
# first, 0.5.17's GPU test that failed in call b1 for its own sizing (the reference ran out of memory)
timeout -k 10 180 python3 -m pytest -m gpu -q -rA -p no:cacheprovider tests/verify/test_oracle.py > $OUT/c/oracle_gpu.txt 2>&1
echo "oracle gpu tests rc $? at +$(( $(date +%s) - T0 )) s" >> $OUT/c/env.txt
$K ptx candidates .dev/ext_pairs.jsonl -o /tmp/ref.jsonl --as reference > $OUT/c/candidates.txt 2>&1 || { tail $OUT/c/candidates.txt; exit 1; }
timeout -k 10 ${EVAL_S:-300} $K ptx evaluate .dev/ext_pairs.jsonl /tmp/ref.jsonl -o /tmp/ev --device cuda --no-timing \
  --workers 4 --batch 32 --build-dir $B > $OUT/c/evaluate.txt 2>&1
echo "evaluate rc $? at +$(( $(date +%s) - T0 )) s" >> $OUT/c/env.txt
cp /tmp/ev/results.jsonl /tmp/ev/summary.json $OUT/c/ 2>/dev/null
timeout -k 10 ${SAN_S:-200} python3 benchmarks/ptx_task_configs.py --sanitize .dev/ext_pairs.jsonl --build-dir $B \
  --json $OUT/c/sanitize.json > $OUT/c/sanitize.txt 2>&1
echo "sanitize rc $? at +$(( $(date +%s) - T0 )) s; $(uptime)" >> $OUT/c/env.txt
tail -6 $OUT/c/evaluate.txt; tail -6 $OUT/c/sanitize.txt; cat $OUT/c/env.txt

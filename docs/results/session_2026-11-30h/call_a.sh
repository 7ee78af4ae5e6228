#!/bin/bash
# Session 25, call a (a fresh nvidia-h200; carry `.dev`): 0.5.18's GPU tests, then issue 44 item 4 on the
# regenerated pairs (.dev/ext_pairs.jsonl, session 24's dim3 fix), then each configured launch under memcheck
# with the rest of the call (one verdict at a time, each kept as it lands).
#   CALL_S=570 bash docs/results/session_2026-11-30h/call_a.sh
export PYTHONUNBUFFERED=1 XDG_CACHE_HOME=/tmp/xdg PYTHONPATH=$PWD/src
K="python3 -m kernelmill.cli"; B=/tmp/kmb; T0=$(date +%s); END=$((T0 + ${CALL_S:-570})); mkdir -p $OUT/a
left() { echo $((END - $(date +%s) - ${1:-0})); }
{ nvidia-smi -L; nproc; date; uptime; python3 -c "import torch; print(torch.__version__)"; } > $OUT/a/env.txt 2>&1
CALL_S=${TESTS_S:-230} GPUS=1 TAG=a LOGS=/tmp/km_gpu_logs \
  QUEUE="80||tests/verify/test_builtin_candidates.py;60||tests/verify/test_oracle.py;55||tests/ptx/test_evaluate_gpu.py" \
  bash .ci/gpu_suite > $OUT/a/gpu_suite.txt 2>&1
echo "gpu tests rc $? at +$(( $(date +%s) - T0 )) s" >> $OUT/a/env.txt
cp -r /tmp/km_gpu_logs $OUT/a/gpu_logs
$K ptx candidates .dev/ext_pairs.jsonl -o /tmp/ref.jsonl --as reference > $OUT/a/candidates.txt 2>&1 || { tail $OUT/a/candidates.txt; exit 1; }
timeout -k 10 $(left ${SAN_MIN:-120}) $K ptx evaluate .dev/ext_pairs.jsonl /tmp/ref.jsonl -o /tmp/ev --device cuda --no-timing \
  --workers 4 --batch 32 --build-dir $B > $OUT/a/evaluate.txt 2>&1
echo "evaluate rc $? at +$(( $(date +%s) - T0 )) s" >> $OUT/a/env.txt
cp /tmp/ev/results.jsonl /tmp/ev/summary.json $OUT/a/ 2>/dev/null
timeout -k 5 $(left 8) python3 benchmarks/ptx_task_configs.py --sanitize .dev/ext_pairs.jsonl --build-dir $B \
  --launch-s ${LAUNCH_S:-30} --json $OUT/a/sanitize.json > $OUT/a/sanitize.txt 2>&1
echo "sanitize rc $? at +$(( $(date +%s) - T0 )) s; $(uptime)" >> $OUT/a/env.txt
grep -h "passed\|failed" /tmp/km_gpu_logs/run_a.txt; tail -3 $OUT/a/evaluate.txt; tail -4 $OUT/a/sanitize.txt; cat $OUT/a/env.txt

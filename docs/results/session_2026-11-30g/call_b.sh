#!/bin/bash
# Session 24's second device call (resumable on a warm machine: /tmp/b is kept between calls):
# 0.5.17's GPU tests for what it changed, both GPUs (.ci/gpu_suite's queue), then issue 42's cost
# table whole, all three levels on one version (benchmarks/guards_cost.py, --resume after a cut):
#   CALL_S=560 TAG=b1 bash docs/results/session_2026-11-30g/call_b.sh
export PYTHONUNBUFFERED=1 XDG_CACHE_HOME=/tmp/xdg PYTHONPATH=$PWD/src
T0=$(date +%s); END=$((T0 + ${CALL_S:-560})); TAG=${TAG:-b1}
mkdir -p /tmp/b/logs
{ nvidia-smi -L; nproc; date; git log --oneline -1 2>/dev/null; uptime; } > /tmp/b/logs/env_$TAG.txt 2>&1
if [ ! -f /tmp/b/gputests.done ]; then
  QUEUE="60||tests/verify/test_oracle.py;60||tests/verify/test_sanitizer.py;55||tests/verify/test_slim_units.py;95||tests/verify/test_cuda_ipc.py;40||tests/verify/test_semantics.py;80||tests/verify/test_builtin_candidates.py" \
    CALL_S=${GPU_S:-300} LOGS=/tmp/b/logs TAG=$TAG KM_GPU_QUEUE_DIR=/tmp/b/q OUT= bash .ci/gpu_suite > /tmp/b/logs/gpu_suite_$TAG.txt 2>&1
  grep -q . /tmp/b/q/pending 2>/dev/null || touch /tmp/b/gputests.done
fi
R=; [ -f /tmp/b/cost.json ] && R=--resume
timeout -k 10 $((END - $(date +%s) - 20)) python3 benchmarks/guards_cost.py --device cuda --languages cuda,triton,torch \
  --levels off,standard,strict --json /tmp/b/cost.json --work /tmp/b/costwork $R > /tmp/b/logs/cost_$TAG.log 2>&1
echo "guards_cost rc $? at +$(( $(date +%s) - T0 )) s; $(uptime)" >> /tmp/b/logs/env_$TAG.txt
cp /tmp/b/cost.json /tmp/b/logs/ 2>/dev/null
tar czf $OUT/$TAG.tgz -C /tmp/b logs
cat /tmp/b/logs/run_$TAG.txt 2>/dev/null; tail -4 /tmp/b/logs/cost_$TAG.log; cat /tmp/b/logs/env_$TAG.txt

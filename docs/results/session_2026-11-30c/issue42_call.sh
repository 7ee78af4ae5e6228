#!/bin/bash
# Issue 42's device tables, one call of a resumable pair (a warm machine keeps /tmp/i42 between calls):
# GPU 0 the hostile corpus by class and the honest corpora (benchmarks/guards_catch.py), GPU 1 the
# calibration suite (benchmarks/calibration/run.py, CHECKS in that order, then KernelBench's rule),
# side by side; both write as verdicts land and resume from what is there. Each call copies the
# partial files and logs out to $OUT/$TAG.tgz. Every call runs the same command:
#   CALL_S=560 TAG=c2 bash docs/results/session_2026-11-30c/issue42_call.sh
# COST=1 adds benchmarks/guards_cost.py (off, standard, strict) on whichever GPU is free first.
export PYTHONUNBUFFERED=1 XDG_CACHE_HOME=/tmp/xdg PYTHONPATH=$PWD/src
T0=$(date +%s); END=$((T0 + ${CALL_S:-560})); TAG=${TAG:-c2}
CHECKS=${CHECKS:-strict_fp64,kb_allclose}
mkdir -p /tmp/i42/logs /tmp/i42/cal
{ nvidia-smi -L; nproc; date; git log --oneline -1 2>/dev/null; uptime; } > /tmp/i42/logs/env_$TAG.txt 2>&1
left() { echo $((END - $(date +%s) - 25)); }
RESUME_GC=""; [ -f /tmp/i42/gc.json ] && RESUME_GC=--resume
RESUME_CAL=""; [ -f /tmp/i42/cal/calibration_cuda.partial.json ] && RESUME_CAL=--resume
( export CUDA_VISIBLE_DEVICES=0
  t=$(date +%s); timeout -k 10 $(left) python3 benchmarks/guards_catch.py --device cuda --json /tmp/i42/gc.json \
    --markdown /tmp/i42/gc.md $RESUME_GC --cache-dir /tmp/i42/gccache > /tmp/i42/logs/gc_$TAG.log 2>&1
  echo "guards_catch rc $? in $(( $(date +%s) - t )) s" >> /tmp/i42/logs/gc_$TAG.log
  if [ -n "${COST:-}" ] && [ "$(left)" -gt 60 ]; then
    timeout -k 10 $(left) python3 benchmarks/guards_cost.py --device cuda --languages cuda,triton,torch \
      --levels off,standard,strict --json /tmp/i42/cost.json > /tmp/i42/logs/cost_$TAG.log 2>&1
    echo "guards_cost rc $?" >> /tmp/i42/logs/cost_$TAG.log
  fi ) &
( export CUDA_VISIBLE_DEVICES=1
  t=$(date +%s); timeout -k 10 $(left) python3 benchmarks/calibration/run.py --device cuda --out /tmp/i42/cal \
    --checks $CHECKS --cache-dir /tmp/i42/calcache $RESUME_CAL > /tmp/i42/logs/cal_$TAG.log 2>&1
  echo "calibration rc $? in $(( $(date +%s) - t )) s" >> /tmp/i42/logs/cal_$TAG.log ) &
wait
echo "call end +$(( $(date +%s) - T0 )) s; $(uptime)" >> /tmp/i42/logs/env_$TAG.txt
cp /tmp/i42/gc.json /tmp/i42/gc.md /tmp/i42/cost.json /tmp/i42/logs/ 2>/dev/null
cp /tmp/i42/cal/* /tmp/i42/logs/ 2>/dev/null
tar czf $OUT/$TAG.tgz -C /tmp/i42 logs
tail -2 /tmp/i42/logs/gc_$TAG.log; tail -4 /tmp/i42/logs/cal_$TAG.log; tail -3 /tmp/i42/logs/cost_$TAG.log 2>/dev/null
head -3 /tmp/i42/gc.md 2>/dev/null; cat /tmp/i42/logs/env_$TAG.txt

#!/bin/bash
# Issue 42's device tables, one call of a resumable series (a warm machine keeps /tmp/i42 between calls):
# the hostile corpus by class and the honest corpora (benchmarks/guards_catch.py), then the calibration
# suite (benchmarks/calibration/run.py, CHECKS in that order), then, with COST=1, the guards' cost
# (benchmarks/guards_cost.py). Each step uses every visible GPU and resumes from what is there; each call
# copies the partial files and logs out to $OUT/$TAG.tgz. Every call runs the same command:
#   CALL_S=570 TAG=c2 COST=1 bash docs/results/session_2026-11-30d/issue42_call.sh
# Session 21's copy of session 20's script (0.5.13 took: guards_catch 514 s, the calibration's three checks
# 441 s, both on two GPUs) with one step first: 0.5.14's GPU tests (the shared-memory fill), once per machine.
# Session 20 ran the first two side by side, one GPU each (PAIR=1): guards_catch took 923 s, the
# calibration's checks 328-498 s each, so one side waited; in series both GPUs work on each step.
export PYTHONUNBUFFERED=1 XDG_CACHE_HOME=/tmp/xdg PYTHONPATH=$PWD/src
T0=$(date +%s); END=$((T0 + ${CALL_S:-560})); TAG=${TAG:-c2}
CHECKS=${CHECKS:-strict_fp64,kb_allclose,kernelmill,kernelmill_fp64}
mkdir -p /tmp/i42/logs /tmp/i42/cal
{ nvidia-smi -L; nproc; date; git log --oneline -1 2>/dev/null; uptime; } > /tmp/i42/logs/env_$TAG.txt 2>&1
left() { echo $((END - $(date +%s) - 25)); }
gputests() {  # 0.5.14's own GPU tests, before the tables that depend on them
  [ -f /tmp/i42/gputests.done ] && return 0
  timeout -k 10 $(left) python3 -m pytest -m gpu -q -p no:cacheprovider tests/verify/test_smem_poison.py \
    >> /tmp/i42/logs/gputests_$TAG.log 2>&1 && touch /tmp/i42/gputests.done
  echo "gpu tests rc $?" >> /tmp/i42/logs/gputests_$TAG.log
}
catch() {
  local resume=""; [ -f /tmp/i42/gc.json ] && resume=--resume
  local t=$(date +%s); timeout -k 10 $(left) python3 benchmarks/guards_catch.py --device cuda --json /tmp/i42/gc.json \
    --markdown /tmp/i42/gc.md $resume --cache-dir /tmp/i42/gccache >> /tmp/i42/logs/gc_$TAG.log 2>&1
  local rc=$?; echo "guards_catch rc $rc in $(( $(date +%s) - t )) s" >> /tmp/i42/logs/gc_$TAG.log; return $rc
}
calibrate() {
  local resume=""; [ -f /tmp/i42/cal/calibration_cuda.partial.json ] && resume=--resume
  [ -f /tmp/i42/cal/calibration_cuda.json ] && [ -z "$resume" ] && { echo "calibration done" >> /tmp/i42/logs/cal_$TAG.log; return 0; }
  local t=$(date +%s); timeout -k 10 $(left) python3 benchmarks/calibration/run.py --device cuda --out /tmp/i42/cal \
    --checks $CHECKS --cache-dir /tmp/i42/calcache $resume >> /tmp/i42/logs/cal_$TAG.log 2>&1
  local rc=$?; echo "calibration rc $rc in $(( $(date +%s) - t )) s" >> /tmp/i42/logs/cal_$TAG.log; return $rc
}
cost() {
  [ -f /tmp/i42/cost.done ] && return 0
  timeout -k 10 $(left) python3 benchmarks/guards_cost.py --device cuda --languages cuda,triton,torch \
    --levels off,standard,strict --json /tmp/i42/cost.json >> /tmp/i42/logs/cost_$TAG.log 2>&1
  local rc=$?; echo "guards_cost rc $rc" >> /tmp/i42/logs/cost_$TAG.log; [ $rc = 0 ] && touch /tmp/i42/cost.done
}
if [ -n "${PAIR:-}" ]; then  # session 20's way: one GPU each, side by side
  ( export CUDA_VISIBLE_DEVICES=0; catch; [ -n "${COST:-}" ] && [ "$(left)" -gt 60 ] && cost ) &
  ( export CUDA_VISIBLE_DEVICES=1; calibrate ) &
  wait
else
  gputests; catch && [ "$(left)" -gt 60 ] && calibrate && [ -n "${COST:-}" ] && [ "$(left)" -gt 60 ] && cost
fi
echo "call end +$(( $(date +%s) - T0 )) s; $(uptime)" >> /tmp/i42/logs/env_$TAG.txt
cp /tmp/i42/gc.json /tmp/i42/gc.md /tmp/i42/cost.json /tmp/i42/logs/ 2>/dev/null
cp /tmp/i42/cal/* /tmp/i42/logs/ 2>/dev/null
tar czf $OUT/$TAG.tgz -C /tmp/i42 logs
tail -2 /tmp/i42/logs/gc_$TAG.log 2>/dev/null; tail -4 /tmp/i42/logs/cal_$TAG.log 2>/dev/null
tail -3 /tmp/i42/logs/cost_$TAG.log 2>/dev/null; tail -2 /tmp/i42/logs/gputests_$TAG.log 2>/dev/null; head -3 /tmp/i42/gc.md 2>/dev/null; cat /tmp/i42/logs/env_$TAG.txt

#!/bin/bash
# Issue 42's device tables on harness 0.5.15, one call of a resumable series: 0.5.15's GPU tests first
# (racecheck on the calibration's races and their twins; the shared-memory fill: once per machine),
# then session 20's script for the rest (guards_catch, the calibration's CHECKS, the cost with COST=1)
# in the time left. Every call runs the same command:
#   CALL_S=570 TAG=c2 COST=1 CHECKS=strict_fp64,kb_allclose,kernelmill bash docs/results/session_2026-11-30e/issue42_call.sh
# (0.5.14 took: guards_catch 603 s, the calibration's strict column 318 s, both on two GPUs.)
export PYTHONUNBUFFERED=1 XDG_CACHE_HOME=/tmp/xdg PYTHONPATH=$PWD/src
T0=$(date +%s); TAG=${TAG:-c2}
mkdir -p /tmp/i42/logs
if [ ! -f /tmp/i42/gputests.done ]; then
  timeout -k 10 480 python3 -m pytest -m gpu -q -p no:cacheprovider tests/verify/test_sanitizer.py tests/verify/test_slim_units.py \
    tests/verify/test_smem_poison.py > /tmp/i42/logs/gputests_$TAG.log 2>&1
  rc=$?; echo "gpu tests rc $rc in $(( $(date +%s) - T0 )) s" >> /tmp/i42/logs/gputests_$TAG.log
  [ $rc = 0 ] && touch /tmp/i42/gputests.done
  tail -3 /tmp/i42/logs/gputests_$TAG.log
fi
CALL_S=$(( ${CALL_S:-570} - ($(date +%s) - T0) )) TAG=$TAG bash docs/results/session_2026-11-30c/issue42_call.sh

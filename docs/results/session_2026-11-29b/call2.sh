#!/bin/bash
# Session 10, device call 2 (the same warm machine, right after call 1): the audit resumed if
# call 1 cut it (issue 43); the second of three parts of the CuTe DSL cu13 wheel left in /tmp.
# (A call carries at most 64 MiB with the working tree: the 92 MB wheel goes as an xz tar in three.)
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src XDG_CACHE_HOME=/tmp/xdg
T0=$(date +%s); END=$((T0 + ${CALL_S:-580}))
cp .whl/cute_parts/cu13.tar.xz.part01 /tmp/cute/
{ date; ls /tmp/cute; } > $OUT/env.txt 2>&1
SRC=../shared/external/cuda-l1/kernels.jsonl; [ -f $SRC ] || SRC=.dev/kernels.jsonl
if [ "$(wc -l < /tmp/audit/verdicts.jsonl)" -lt 90 ]; then
  timeout -k 10 $((END - $(date +%s) - 25)) python3 -m kernelmill audit $SRC -o /tmp/audit --device cuda > $OUT/audit2.log 2>&1
  echo "audit rc $? at +$(( $(date +%s) - T0 )) s; verdicts $(wc -l < /tmp/audit/verdicts.jsonl)" >> $OUT/env.txt
  pkill -f "kernelmill audit" 2>/dev/null; cp -r /tmp/audit $OUT/audit
fi
R=; [ -f /tmp/cal/calibration_cuda.partial.json ] && R=--resume
LEFT=$((END - $(date +%s) - 20))
if [ $LEFT -gt 60 ]; then
  timeout -k 10 $LEFT python3 benchmarks/calibration/run.py --device cuda --out /tmp/cal --cache-dir /tmp/calcache $R > $OUT/cal.log 2>&1
  echo "calibration rc $? at +$(( $(date +%s) - T0 )) s" >> $OUT/env.txt
  pkill -f "calibration/run.py" 2>/dev/null; cp -r /tmp/cal $OUT/cal
fi
cat $OUT/env.txt; tail -n 12 $OUT/audit2.log 2>/dev/null; tail -n 5 $OUT/cal.log 2>/dev/null

#!/bin/bash
# Rounds of 20 ms (the default) against 5 ms (--round-ms 5), kernelmill alone, 22 cuda-l1 candidates that
# were `ok` in call w1 (torch rewrites: no build), one fresh GPU: A (default, cold), B (5 ms), A2 (default
# again, warm) while the call's time lasts. What to read: each verdict's timing_stages.rounds_s, time_s and
# speedup, A against B (same harness, so a self-consistency check, not issue 21's independent one).
# Carry `.dev/kernels.jsonl` (kernelmill alone needs no KernelBench).
export PYTHONUNBUFFERED=1 XDG_CACHE_HOME=/tmp/xdg
T0=$(date +%s); END=$((T0 + ${CALL_S:-160}))
[ -d .whl/kb ] && { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/kb/*.whl || exit 1; }
export PYTHONPATH=$PWD/src:/tmp/site
ONLY=cudal1-a100-L1-86,cudal1-a100-L1-71,cudal1-l40-L1-70,cudal1-l40-L2-48,cudal1-l40-L1-73,cudal1-a100-L1-46,cudal1-l40-L3-50,cudal1-a100-L1-34,cudal1-l40-L1-57,cudal1-a100-L1-45,cudal1-l40-L3-6,cudal1-a100-L3-28,cudal1-l40-L2-5,cudal1-a100-L2-22,cudal1-3090-L2-98,cudal1-l40-L3-3,cudal1-l40-L2-68,cudal1-l40-L2-94,cudal1-a100-L2-85,cudal1-l40-L2-45,cudal1-a100-L2-14,cudal1-a100-L1-72
mkdir -p /tmp/vr
for step in "A " "B --kernelmill-arg=--round-ms=5" "A2 "; do
  set -- $step; name=$1; shift
  LEFT=$((END - $(date +%s))); [ $LEFT -gt 30 ] || break
  timeout -k 5 $((LEFT - 3)) python3 benchmarks/vs_kernelbench.py --external .dev/kernels.jsonl --only $ONLY --skip-kernelbench \
    --kernelbench .kb --out /tmp/vr/$name.json --work /tmp/vr_$name --stop-at $((END - 8)) "$@" > /tmp/vr/log_$name.txt 2>&1
  echo "$name rc $? at +$(( $(date +%s) - T0 )) s" | tee -a /tmp/vr/steps.txt
done
nvidia-smi -L >> /tmp/vr/steps.txt; tar czf $OUT/vr.tgz -C /tmp vr
grep -h "kernelmill verify:" /tmp/vr/log_*.txt

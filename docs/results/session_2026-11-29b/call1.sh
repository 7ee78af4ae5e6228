#!/bin/bash
# Session 10, device call 1 (nvidia-h200, a fresh machine, nothing prepared): `kernelmill audit`
# of all 90 cuda-l1 kernels, cold (issue 43 item 3); the first half of the CuTe DSL cu13 wheel is
# left in /tmp for call 2 (issue 41).
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src XDG_CACHE_HOME=/tmp/xdg
T0=$(date +%s); END=$((T0 + ${CALL_S:-580}))
mkdir -p /tmp/cute && cp .whl/cute_parts/cu13.tar.xz.part00 .whl/cute/*.whl /tmp/cute/
{ nvidia-smi -L; nproc; date; git log --oneline -1 2>/dev/null; python3 -c "import torch; print(torch.__version__)"; } > $OUT/env.txt 2>&1
SRC=../shared/external/cuda-l1/kernels.jsonl
if [ ! -f $SRC ]; then { mkdir -p ../shared/external/cuda-l1 && cp .dev/kernels.jsonl $SRC; } 2>/dev/null || SRC=.dev/kernels.jsonl; fi
echo "source $SRC $(md5sum < $SRC)" >> $OUT/env.txt
timeout -k 10 $((END - $(date +%s) - 25)) python3 -m kernelmill audit $SRC -o /tmp/audit --device cuda > $OUT/audit1.log 2>&1
echo "audit rc $? at +$(( $(date +%s) - T0 )) s; verdicts $(wc -l < /tmp/audit/verdicts.jsonl)" >> $OUT/env.txt
pkill -f "kernelmill" 2>/dev/null; cp -r /tmp/audit $OUT/audit
cat $OUT/env.txt; tail -n 12 $OUT/audit1.log

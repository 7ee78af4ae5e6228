#!/bin/bash
# Session 9, device call 3 (nvidia-h200: x2 was not lent). The host otherwise idle: the KernelBench-convention
# host path of four launch-bound references at the external table's sizes, in a fresh process per
# condition (benchmarks/diag/kb_host_path.py). Then GPU tests of the build and zygote paths.
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD/src
T0=$(date +%s); END=$((T0 + ${CALL_S:-330}))
{ nvidia-smi -L; nproc; date; } > $OUT/env.txt
CUDA_VISIBLE_DEVICES=0 python3 benchmarks/diag/kb_host_path.py --external .dev/kernels.jsonl \
  --rows cudal1-a100-L1-100,cudal1-a100-L1-39,cudal1-a100-L2-14,cudal1-l40-L2-45 --load 16 \
  --out $OUT/host_path.json > $OUT/diag.log 2>&1
echo "diag done at +$(( $(date +%s) - T0 )) s" >> $OUT/env.txt
CUDA_VISIBLE_DEVICES=0 timeout $((END - $(date +%s))) python3 -m pytest -q -m gpu tests/verify/test_slim_units.py \
  tests/verify/test_unit_merge.py tests/verify/test_zygote.py -p no:cacheprovider --basetemp /tmp/pt0 -rA --durations 5 > $OUT/gpu0.log 2>&1
echo "tests done at +$(( $(date +%s) - T0 )) s" >> $OUT/env.txt
cat $OUT/env.txt $OUT/diag.log; tail -n 3 $OUT/gpu0.log

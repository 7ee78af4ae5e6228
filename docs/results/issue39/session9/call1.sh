#!/bin/bash
# Session 9, device call 1 (nvidia-h200-x2): (1) kernelmill (this commit: KernelBench trials
# redone when the timing thread was descheduled) on the 29 rows KernelBench's harness measured
# in session 7, then KernelBench's harness twice more per row (3 processes per row in all);
# (2) with the time left, the independent harness on the timed rows that lack it, against
# session 7's verdicts (fixed files).
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/kb/*.whl || exit 1
export PYTHONPATH=$PWD/src:/tmp/site
S7=docs/results/issue39/session7
T0=$(date +%s); END=$((T0 + ${CALL_S:-560}))
{ nvidia-smi -L; nproc; git log --oneline -1 2>/dev/null; date; } > $OUT/env.txt
cp $S7/fidelity.json $OUT/kbq.json
python3 benchmarks/timing_fidelity.py --device cuda --external .dev/kernels.jsonl --no-corpus \
  --kernelbench .kb --kernelbench-rows external --kernelbench-repeat 3 --only "$(cat .dev/kb_rows.txt)" \
  --out $OUT/kbq.json --resume --measure-timeout 120 --stop-at $((END - 200)) --markdown $OUT/kbq.md > $OUT/kbq.log 2>&1
echo "kbq done at +$(( $(date +%s) - T0 )) s" >> $OUT/env.txt
cp $S7/fidelity.json $OUT/fidA.json
python3 benchmarks/timing_fidelity.py --device cuda --external .dev/kernels.jsonl --no-corpus \
  --kernelbench .kb --kernelbench-rows none --verdicts $S7/run1.verdicts.jsonl --second-verdicts $S7/run2.verdicts.jsonl \
  --out $OUT/fidA.json --resume --prebuild 8 --measure-timeout 120 --stop-at $((END - 15)) --markdown $OUT/fidA.md > $OUT/fidA.log 2>&1
echo "fidA done at +$(( $(date +%s) - T0 )) s" >> $OUT/env.txt
tail -5 $OUT/kbq.log $OUT/fidA.log

#!/bin/bash
# Session 11, device call 1 (nvidia-h200, a fresh machine; no larger kind was lent): timing
# fidelity on the builtin and LLM-style corpora (issue 39) alone on the GPU, resumable in call 2.
# The first third of the CuTe DSL cu13 wheel is left in /tmp for call 3 (issue 41).
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src XDG_CACHE_HOME=/tmp/xdg
T0=$(date +%s); END=$((T0 + ${CALL_S:-575}))
mkdir -p /tmp/cute /tmp/fid /tmp/logs && cp .whl/cute_parts/cu13.tar.xz.part00 /tmp/cute/
{ nvidia-smi -L; nproc; date; git log --oneline -1 2>/dev/null; python3 -c "import torch; print(torch.__version__)"; } > /tmp/logs/env1.txt 2>&1
timeout -k 10 $((END - $(date +%s) - 12)) python3 benchmarks/timing_fidelity.py --device cuda \
  --llm benchmarks/corpus_llm --kernelbench .kb --kernelbench-rows none --work /tmp/fid/corpus \
  --out /tmp/fid/fid.json --resume --markdown /tmp/fid/fid.md --prebuild 8 --measure-timeout 120 \
  --stop-at $((END - 35)) > /tmp/logs/fid1.log 2>&1
echo "fidelity rc $? at +$(( $(date +%s) - T0 )) s" >> /tmp/logs/env1.txt
cp /tmp/fid/fid.json /tmp/fid/fid.verdicts.jsonl /tmp/fid/fid.md /tmp/logs/ 2>/dev/null
tar czf $OUT/call1.tgz -C /tmp logs
tail -6 /tmp/logs/fid1.log; cat /tmp/logs/env1.txt

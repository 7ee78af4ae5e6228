#!/bin/bash
# Session 12 device calls 1-2 (nvidia-h200, one GPU): the whole `-m gpu` suite (issue 41), one
# pytest process per file (a failed-launch test leaves a sticky CUDA error in its process), files
# named in $FILES; call 1 also prebuilds issue 39's 60 corpus rows' extensions in the background
# (CPU work, niced; the warm machine keeps /tmp for the measuring call).
export PYTHONUNBUFFERED=1 XDG_CACHE_HOME=/tmp/xdg
T0=$(date +%s); END=$((T0 + ${CALL_S:-575})); TAG=${TAG:-c1}
mkdir -p /tmp/logs /tmp/fid /tmp/site
[ -d /tmp/site/tree_sitter ] || pip install -q --no-deps --target /tmp/site .whl/ts/*.whl > /tmp/logs/pip.log 2>&1
export PYTHONPATH=$PWD/src:$PWD/tests:/tmp/site
{ nvidia-smi -L; nproc; date; python3 -c "import torch, triton; print(torch.__version__, triton.__version__)";
  python3 -c "import transformers; print('transformers', transformers.__version__)" 2>&1 | tail -1; } > /tmp/logs/env_$TAG.txt 2>&1
if [ -n "$PREBUILD" ]; then
  MAX_JOBS=2 nice -n 10 timeout -k 5 $((END - $(date +%s) - 10)) python3 benchmarks/timing_fidelity.py --device cuda --llm benchmarks/corpus_llm \
    --kernelbench .kb --kernelbench-rows none --verdicts docs/results/session_2026-11-29c/call1/fid.verdicts.jsonl \
    --only "$(tail -1 docs/results/session_2026-11-29c/fidelity_rows.txt)" --work /tmp/fid/corpus \
    --out /tmp/fid/fid.json --resume --prebuild 4 --prebuild-only --measure-timeout 300 \
    --stop-at $((END - 150)) > /tmp/logs/prebuild_$TAG.log 2>&1 &
  PB=$!
fi
for f in $FILES; do
  left=$((END - $(date +%s) - 20)); [ $left -lt 20 ] && { echo "$f not run: time" >> /tmp/logs/env_$TAG.txt; continue; }
  t=$(date +%s)
  timeout -k 5 $left python3 -m pytest -m gpu -q -rA -p no:cacheprovider --durations=0 "$f" > /tmp/logs/$(basename $f .py)_$TAG.log 2>&1
  echo "$f rc $? $(( $(date +%s) - t )) s: $(tail -1 /tmp/logs/$(basename $f .py)_$TAG.log)" >> /tmp/logs/env_$TAG.txt
done
[ -n "$PB" ] && { wait $PB; echo "prebuild rc $?" >> /tmp/logs/env_$TAG.txt; }
echo "end +$(( $(date +%s) - T0 )) s" >> /tmp/logs/env_$TAG.txt
tar czf $OUT/$TAG.tgz -C /tmp logs
cat /tmp/logs/env_$TAG.txt; tail -3 /tmp/logs/prebuild_$TAG.log 2>/dev/null

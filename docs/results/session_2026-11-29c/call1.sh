#!/bin/bash
# Session 11, device call 1 (nvidia-h200-x4, a fresh machine), four cards side by side:
#  cards 0,1: timing fidelity on the builtin and LLM-style corpora (issue 39), resumable;
#  card 2:    the GPU hostile corpus + builtin candidates under strict guards (tests/guards -m gpu);
#  card 3:    the GPU build/timing tests changed since they last ran (load(), slim units, zygote, timing).
# The first third of the CuTe DSL cu13 wheel is left in /tmp for call 3 (issue 41).
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src XDG_CACHE_HOME=/tmp/xdg
T0=$(date +%s); END=$((T0 + ${CALL_S:-570}))
mkdir -p /tmp/cute /tmp/fid /tmp/logs && cp .whl/cute_parts/cu13.tar.xz.part00 /tmp/cute/
{ nvidia-smi -L; nproc; date; git log --oneline -1 2>/dev/null; python3 -c "import torch; print(torch.__version__)"; } > /tmp/logs/env1.txt 2>&1
left() { echo $((END - $(date +%s) - $1)); }
CUDA_VISIBLE_DEVICES=0,1 timeout -k 10 $(left 15) python3 benchmarks/timing_fidelity.py --device cuda \
  --llm benchmarks/corpus_llm --kernelbench .kb --kernelbench-rows none --work /tmp/fid/corpus \
  --out /tmp/fid/fid.json --resume --markdown /tmp/fid/fid.md --prebuild 8 --measure-timeout 120 \
  --stop-at $((END - 30)) > /tmp/logs/fid1.log 2>&1 &
CUDA_VISIBLE_DEVICES=2 timeout -k 10 $(left 15) python3 -m pytest -q -m gpu tests/guards/test_gpu_corpus.py \
  -p no:cacheprovider --basetemp /tmp/pt2 -rA -s > /tmp/logs/gpu_corpus.log 2>&1 &
CUDA_VISIBLE_DEVICES=3 timeout -k 10 $(left 15) python3 -m pytest -q -m gpu tests/verify/test_load_gpu.py \
  tests/verify/test_timing_gpu.py tests/verify/test_slim_units.py tests/verify/test_unit_merge.py tests/verify/test_zygote.py \
  -p no:cacheprovider --basetemp /tmp/pt3 -rA > /tmp/logs/gpu_build.log 2>&1 &
wait
echo "call 1 done at +$(( $(date +%s) - T0 )) s" >> /tmp/logs/env1.txt
cp /tmp/fid/fid.json /tmp/fid/fid.verdicts.jsonl /tmp/fid/fid.md /tmp/logs/ 2>/dev/null
tar czf $OUT/call1.tgz -C /tmp logs
for f in /tmp/logs/gpu_corpus.log /tmp/logs/gpu_build.log; do grep -E "^(FAILED|ERROR)|passed|failed" $f | tail -8; done
tail -4 /tmp/logs/fid1.log; cat /tmp/logs/env1.txt

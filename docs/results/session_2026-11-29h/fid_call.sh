#!/bin/bash
# Issue 39's rows, one device call (resumable; a warm machine keeps /tmp/fid between calls).
# Carry `.kb .dev .whl/kb`: `.dev/kernels.jsonl` is ../shared/external/cuda-l1/kernels.jsonl (which
# does not travel), `.whl/kb` KernelBench's own dependencies (python-dotenv, pydantic: without them
# its eval does not import, as in session 16; timing_fidelity.py now stops at once if so).
# TAG names the call's logs; EXTRA adds timing_fidelity options:
#   call 1 (fresh): EXTRA="--prebuild 16 --prebuild-only"  kernelmill verifies the 150 rows (both GPUs),
#                   then the timed load_inline rows are built for the independent sides
#   calls 2, 3:     EXTRA="--prebuild 16"                  the independent side and KernelBench's
#   call 4:         EXTRA="--prebuild 16 --repeat"         a second kernelmill run (reproducibility)
# Rows: fidelity_rows.txt beside this script (60 corpus rows of session 12, all 90 cuda-l1 rows).
export PYTHONUNBUFFERED=1 XDG_CACHE_HOME=/tmp/xdg
HERE=docs/results/session_2026-11-29h
[ -d /tmp/site/dotenv ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/kb/*.whl || exit 1
export PYTHONPATH=$PWD/src:/tmp/site
SRC=../shared/external/cuda-l1/kernels.jsonl; [ -f $SRC ] || SRC=.dev/kernels.jsonl
T0=$(date +%s); END=$((T0 + ${CALL_S:-570})); TAG=${TAG:-f1}
mkdir -p /tmp/fid /tmp/logs
{ nvidia-smi -L; nproc; date; git log --oneline -1 2>/dev/null; python3 -c "import torch; print(torch.__version__)"; uptime; } > /tmp/logs/env_$TAG.txt 2>&1
timeout -k 10 $((END - $(date +%s) - 12)) python3 benchmarks/timing_fidelity.py --device cuda \
  --external $SRC --llm benchmarks/corpus_llm --kernelbench .kb \
  --kernelbench-rows ${KB_ROWS:-external} --only "$(tail -1 $HERE/fidelity_rows.txt)" --work /tmp/fid/corpus \
  --out /tmp/fid/fid.json --resume --markdown /tmp/fid/fid.md --measure-timeout 120 \
  --stop-at $((END - 35)) $EXTRA > /tmp/logs/fid_$TAG.log 2>&1
echo "fidelity rc $? at +$(( $(date +%s) - T0 )) s; $(uptime)" >> /tmp/logs/env_$TAG.txt
cp /tmp/fid/fid.json /tmp/fid/fid.verdicts.jsonl /tmp/fid/fid.second.verdicts.jsonl /tmp/fid/fid.md /tmp/logs/ 2>/dev/null
tar czf $OUT/$TAG.tgz -C /tmp logs
grep -E "kernelmill verify|prebuilt [0-9]|time limit|kernelbench|^\[[0-9]+/" /tmp/logs/fid_$TAG.log | tail -8; tail -3 /tmp/logs/fid_$TAG.log; cat /tmp/logs/env_$TAG.txt

#!/bin/bash
# Call 1 of the session of 2026-11-30 (nineteenth), a fresh nvidia-h200-x2: the scale_add diagnosis
# (nothing else on the GPUs), the GPU tests of 0.5.9-0.5.11's changes, then issue 39's kernelmill side.
T0=$(date +%s); mkdir -p /tmp/logs
{ timeout 120 python3 docs/results/session_2026-11-30/per_call_sequence.py; echo "rc $? in $(( $(date +%s) - T0 )) s"; } > /tmp/logs/per_call_sequence.txt 2>&1
T1=$(date +%s)
PYTHONPATH=$PWD/src timeout 220 python3 -m pytest -m gpu -q -p no:cacheprovider \
  tests/guards/test_runtime_hooks.py tests/verify/test_load_gpu.py -k "torch_compile or calls_min or torch_labelled" \
  > /tmp/logs/gpu_targeted.txt 2>&1
echo "pytest rc $? in $(( $(date +%s) - T1 )) s" >> /tmp/logs/gpu_targeted.txt
tail -3 /tmp/logs/per_call_sequence.txt; tail -4 /tmp/logs/gpu_targeted.txt
CALL_S=$(( ${CALL_S:-578} - ($(date +%s) - T0) )) TAG=f1 KB_ROWS=none EXTRA="--prebuild 16" \
  bash docs/results/session_2026-11-29h/fid_call.sh

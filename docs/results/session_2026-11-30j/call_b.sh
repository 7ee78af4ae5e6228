#!/bin/bash
# Session 27, calls b, d and e (nvidia-h200-x2): harness 0.5.21 (deferred reading of the rounds'
# device records; call b ran its first form, whose records were lost: see the README). b (fresh): kernelmill on all 90 of cuda-l1, cold, nothing prepared,
# --gpu-watch; then issue 21's independent side (timing_fidelity.py, nothing of kernelmill's
# timing imported) on the same verdicts until the call's deadline. c (warm, RESUME=1): the
# independent side goes on, then the GPU tests, then benchmarks/timing_cost.py.
# Carry `.kb .dev/kernels.jsonl .whl/ts`. The run writes /tmp/vk/vs_km_b.* in every call (raw/d holds call d's as vs_km_d.*).
#   TAG=b bash docs/results/session_2026-11-30j/call_b.sh
#   TAG=d CALL_S=520 bash docs/results/session_2026-11-30j/call_b.sh       (fresh, after the fix)
#   TAG=e RESUME=1 TESTS_S=... bash docs/results/session_2026-11-30j/call_b.sh
export PYTHONUNBUFFERED=1 XDG_CACHE_HOME=/tmp/xdg
T0=$(date +%s); END=$((T0 + ${CALL_S:-575})); TAG=${TAG:-b}
export PYTHONPATH=$PWD/src
mkdir -p /tmp/vk
{ nvidia-smi -L; nproc; date; uptime; free -g | head -2; python3 -c "import torch; print(torch.__version__)"; } > /tmp/vk/env_$TAG.txt 2>&1
if [ -z "${RESUME:-}" ]; then
  timeout -k 10 $((END - $(date +%s) - 5)) python3 benchmarks/vs_kernelbench.py --external .dev/kernels.jsonl --gpus 2 \
    --kernelbench .kb --out /tmp/vk/vs_km_b.json --markdown /tmp/vk/vs_km_b.md --work /tmp/vskb_b \
    --skip-kernelbench --gpu-watch --stop-at $((END - 60)) > /tmp/vk/log_km_$TAG.txt 2>&1
  echo "kernelmill side rc $? at +$(( $(date +%s) - T0 )) s; $(uptime)" >> /tmp/vk/env_$TAG.txt
fi
# a run whose rounds fell back to their events is not worth the independent side: the GPU test instead
PARTIAL=$(grep -c kernel_time_partial /tmp/vk/vs_km_b.verdicts.jsonl 2>/dev/null)
if [ "${PARTIAL:-0}" -gt 5 ]; then
  echo "$PARTIAL verdicts with kernel_time_partial: GPU timing tests instead of the independent side" >> /tmp/vk/env_$TAG.txt
  TESTS_S=${TESTS_S:-300}; QUEUE="120||tests/verify/test_timing_gpu.py"
fi
FID_END=$((END - ${TESTS_S:-0} - 40))
if [ $((FID_END - $(date +%s))) -gt 30 ]; then
  timeout -k 10 $((FID_END - $(date +%s) + 25)) python3 benchmarks/timing_fidelity.py --device cuda --no-corpus \
    --external .dev/kernels.jsonl --verdicts /tmp/vk/vs_km_b.verdicts.jsonl --kernelbench .kb --kernelbench-rows none \
    --work /tmp/fid/corpus --out /tmp/vk/fid.json --resume --markdown /tmp/vk/fid.md --measure-timeout 120 \
    --stop-at $FID_END > /tmp/vk/fid_$TAG.log 2>&1
  echo "fidelity rc $? at +$(( $(date +%s) - T0 )) s" >> /tmp/vk/env_$TAG.txt
fi
LEFT=$((END - $(date +%s)))
if [ -n "${TESTS_S:-}" ] && [ $LEFT -gt 90 ]; then
  WHEELS=.whl/ts CALL_S=$((LEFT - 45)) GPUS=2 TAG=$TAG LOGS=/tmp/vk/gpu_logs \
    QUEUE="${QUEUE:-120||tests/verify/test_timing_gpu.py;80||tests/verify/test_builtin_candidates.py;55||tests/ptx/test_evaluate_gpu.py;45||tests/verify/test_compiled_baseline.py}" \
    bash .ci/gpu_suite > /tmp/vk/gpu_suite_$TAG.txt 2>&1
  echo "gpu_suite rc $? at +$(( $(date +%s) - T0 )) s" >> /tmp/vk/env_$TAG.txt
  timeout 40 python3 benchmarks/timing_cost.py --rounds 5 --only relu_4k,relu_16M,conv_64ch --json /tmp/vk/timing_cost_$TAG.json \
    > /tmp/vk/timing_cost_$TAG.txt 2>&1
fi
tar czf $OUT/vk_$TAG.tgz -C /tmp vk
grep -E "kernelmill verify|GPU [01]:" /tmp/vk/log_km_$TAG.txt 2>/dev/null | tail -3 | cut -c1-400
grep -E "^\[[0-9]+/|within|median" /tmp/vk/fid_$TAG.log | tail -4 | cut -c1-300; tail -2 /tmp/vk/fid_$TAG.log | cut -c1-300
cut -c1-250 /tmp/vk/timing_cost_$TAG.txt 2>/dev/null; cat /tmp/vk/env_$TAG.txt; tail -6 /tmp/vk/gpu_logs/run_$TAG.txt 2>/dev/null

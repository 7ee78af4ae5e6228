#!/bin/bash
# Session 27, call a (fresh nvidia-h200-x2): kernelmill 0.5.20 on all 90 of cuda-l1, cold,
# nothing prepared, with --gpu-watch (each GPU lock hold logged, nvidia-smi sampled); then
# benchmarks/timing_cost.py (with its `toggled` variant); then 0.5.20's GPU tests not yet
# run on a GPU. Carry `.kb .dev/kernels.jsonl .whl/ts`.
#   TAG=a bash docs/results/session_2026-11-30j/call_a.sh
export PYTHONUNBUFFERED=1 XDG_CACHE_HOME=/tmp/xdg
T0=$(date +%s); END=$((T0 + ${CALL_S:-570})); TAG=${TAG:-a}
export PYTHONPATH=$PWD/src
mkdir -p /tmp/vk
{ nvidia-smi -L; nproc; date; uptime; free -g | head -2; python3 -c "import torch; print(torch.__version__)"; git log --oneline -1; } > /tmp/vk/env_$TAG.txt 2>&1
VK="python3 benchmarks/vs_kernelbench.py --external .dev/kernels.jsonl --gpus 2 --kernelbench .kb --out /tmp/vk/vs_km_$TAG.json --markdown /tmp/vk/vs_km_$TAG.md --work /tmp/vskb_$TAG"
if [ -z "${NO_KM:-}" ]; then
  timeout -k 10 $((END - $(date +%s) - 5)) $VK --skip-kernelbench --gpu-watch ${KM_EXTRA:-} --stop-at $((END - 40)) > /tmp/vk/log_km_$TAG.txt 2>&1
  echo "kernelmill side rc $? at +$(( $(date +%s) - T0 )) s; $(uptime)" >> /tmp/vk/env_$TAG.txt
fi
if [ -n "${COST:-1}" ]; then
  timeout 120 python3 benchmarks/timing_cost.py --rounds 5 --json /tmp/vk/timing_cost_$TAG.json > /tmp/vk/timing_cost_$TAG.txt 2>&1
  echo "timing_cost rc $? at +$(( $(date +%s) - T0 )) s" >> /tmp/vk/env_$TAG.txt
fi
LEFT=$((END - $(date +%s)))
if [ -n "${GPU_TESTS:-1}" ] && [ $LEFT -gt 90 ]; then
  WHEELS=.whl/ts CALL_S=$((LEFT - 10)) GPUS=2 TAG=$TAG LOGS=/tmp/vk/gpu_logs \
    QUEUE="${QUEUE:-120||tests/verify/test_timing_gpu.py;95||tests/verify/test_cuda_ipc.py;55||tests/ptx/test_evaluate_gpu.py}" \
    bash .ci/gpu_suite > /tmp/vk/gpu_suite_$TAG.txt 2>&1
  echo "gpu_suite rc $? at +$(( $(date +%s) - T0 )) s" >> /tmp/vk/env_$TAG.txt
fi
tar czf $OUT/vk_$TAG.tgz -C /tmp vk
tail -25 /tmp/vk/log_km_$TAG.txt 2>/dev/null | cut -c1-250; cut -c1-220 /tmp/vk/timing_cost_$TAG.txt 2>/dev/null; cat /tmp/vk/env_$TAG.txt
cat /tmp/vk/gpu_logs/run_$TAG.txt 2>/dev/null | tail -6

#!/bin/bash
# Session 28 (nvidia-h200-x2), issue 40 target 1 as the issue defines it, harness 0.5.24:
# kernelmill first on a fresh machine (all 90 of cuda-l1, nothing prepared, a fresh build cache,
# both GPUs, --gpu-watch), then KernelBench's harness on the same machine, same candidates, same
# trials (5 correctness, its 100 perf trials), --gpus 2, until the call's deadline; the next calls
# on the warm machine resume it (RESUME=1). Once KernelBench is done and GPU_TESTS=1, the rest of
# the call runs the GPU tests, then issue 21's independent side (FID=1) on the run's verdicts.
# (Session 26's call_w.sh, with the watch on and timing_cost.py left out.)
# Carry `.kb .dev/kernels.jsonl .whl/kb .whl/ts`.
#   call 1 (fresh):  TAG=w1 bash docs/results/session_2026-12-01k/call_w.sh
#   calls 2, 3 (warm): TAG=w2 RESUME=1 GPU_TESTS=1 FID=1 bash docs/results/session_2026-12-01k/call_w.sh
export PYTHONUNBUFFERED=1 XDG_CACHE_HOME=/tmp/xdg
T0=$(date +%s); END=$((T0 + ${CALL_S:-570})); TAG=${TAG:-w1}
[ -d /tmp/site/dotenv ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/kb/*.whl || exit 1
export PYTHONPATH=$PWD/src:/tmp/site
mkdir -p /tmp/vk
{ nvidia-smi -L; nproc; date; uptime; free -g | head -2; python3 -c "import torch; print(torch.__version__)"; } > /tmp/vk/env_$TAG.txt 2>&1
VK="python3 benchmarks/vs_kernelbench.py --external .dev/kernels.jsonl --gpus 2 --kernelbench .kb --out /tmp/vk/vs_kb_all.json --markdown /tmp/vk/vs_kb_all.md --work /tmp/vskb_all"
if [ -z "${RESUME:-}" ]; then
  timeout -k 10 $((END - $(date +%s) - 5)) $VK --skip-kernelbench --gpu-watch --stop-at $((END - 40)) > /tmp/vk/log_km_$TAG.txt 2>&1
  echo "kernelmill side rc $? at +$(( $(date +%s) - T0 )) s; $(uptime)" >> /tmp/vk/env_$TAG.txt
fi
LEFT=$((END - $(date +%s)))
if [ $LEFT -gt 60 ]; then
  timeout -k 10 $((LEFT - 5)) $VK --resume --stop-at $((END - ${KB_MARGIN:-40})) > /tmp/vk/log_kb_$TAG.txt 2>&1
  echo "vs_kernelbench rc $? at +$(( $(date +%s) - T0 )) s; $(uptime)" >> /tmp/vk/env_$TAG.txt
fi
LEFT=$((END - $(date +%s)))
KB_DONE=$(python3 -c "import json; r=json.load(open('/tmp/vk/vs_kb_all.json')); print(int(len(r.get('kernelbench',{}).get('eval',{}))>=len(r['candidates'])))" 2>/dev/null)
if [ -n "${GPU_TESTS:-}" ] && [ "$KB_DONE" = 1 ] && [ $LEFT -gt 120 ] && [ ! -f /tmp/vk/gpu_done ]; then
  WHEELS=.whl/ts CALL_S=$((LEFT > 330 ? 300 : LEFT - 30)) GPUS=2 TAG=$TAG LOGS=/tmp/vk/gpu_logs \
    QUEUE="120||tests/verify/test_timing_gpu.py;80||tests/verify/test_builtin_candidates.py;55||tests/ptx/test_evaluate_gpu.py;45||tests/verify/test_compiled_baseline.py;60||tests/verify/test_cuda_ipc.py" \
    bash .ci/gpu_suite > /tmp/vk/gpu_suite_$TAG.txt 2>&1
  echo "gpu_suite rc $? at +$(( $(date +%s) - T0 )) s" >> /tmp/vk/env_$TAG.txt; touch /tmp/vk/gpu_done
fi
FID_END=$((END - 40))
if [ -n "${FID:-}" ] && [ "$KB_DONE" = 1 ] && [ $((FID_END - $(date +%s))) -gt 45 ]; then
  timeout -k 10 $((FID_END - $(date +%s) + 25)) python3 benchmarks/timing_fidelity.py --device cuda --no-corpus \
    --external .dev/kernels.jsonl --verdicts /tmp/vk/vs_kb_all.verdicts.jsonl --kernelbench .kb --kernelbench-rows none \
    --work /tmp/fid/corpus --out /tmp/vk/fid.json --resume --markdown /tmp/vk/fid.md --measure-timeout 120 \
    --stop-at $FID_END > /tmp/vk/fid_$TAG.log 2>&1
  echo "fidelity rc $? at +$(( $(date +%s) - T0 )) s" >> /tmp/vk/env_$TAG.txt
fi
cp /tmp/vskb_all/kb_logs/*.log /tmp/vk/kb_logs/ 2>/dev/null || { mkdir -p /tmp/vk/kb_logs; cp /tmp/vskb_all/kb_logs/*.log /tmp/vk/kb_logs/ 2>/dev/null; }
tar czf $OUT/vk_$TAG.tgz -C /tmp vk
grep -E "kernelmill verify|GPU [01]:|compile phase|stop-at|ratio|nothing left" /tmp/vk/log_*_$TAG.txt | tail -8 | cut -c1-400
tail -3 /tmp/vk/log_km_$TAG.txt /tmp/vk/log_kb_$TAG.txt 2>/dev/null | cut -c1-400; cat /tmp/vk/env_$TAG.txt
grep -E "within|median" /tmp/vk/fid_$TAG.log 2>/dev/null | tail -3 | cut -c1-300; tail -6 /tmp/vk/gpu_logs/run_$TAG.txt 2>/dev/null
python3 - <<'PY'
import json, collections
try:
    rows = [json.loads(l) for l in open('/tmp/vk/vs_kb_all.verdicts.jsonl')]
except OSError:
    rows = []
print("kernelmill statuses", collections.Counter(r.get('status') for r in rows), "versions", {r.get('harness_version') for r in rows},
      "partial", sum('kernel_time_partial' in (r.get('flags') or []) for r in rows))
PY

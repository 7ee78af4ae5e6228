#!/bin/bash
# Issue 40 target 1, the whole set in one piece on one machine of 2 GPUs (nvidia-h200-x2):
# kernelmill first on the fresh machine (all 90 of cuda-l1, nothing prepared, a fresh build
# cache, both GPUs), then benchmarks/timing_cost.py (where a round's wall goes; it runs after
# kernelmill so that kernelmill finds the machine cold), then KernelBench's harness on the same
# machine, same candidates, same trials (5 correctness, its 100 perf trials), --gpus 2, until
# the call's deadline; the next calls on the warm machine resume it (RESUME=1). When nothing is
# left for KernelBench and GPU_TESTS=1, the rest of the call runs the GPU tests.
# Carry `.kb .dev/kernels.jsonl .whl/kb .whl/ts`.
#   call 1 (fresh):  TAG=w1 bash docs/results/session_2026-11-30i/call_w.sh
#   call 2 (warm):   TAG=w2 RESUME=1 GPU_TESTS=1 bash docs/results/session_2026-11-30i/call_w.sh
export PYTHONUNBUFFERED=1 XDG_CACHE_HOME=/tmp/xdg
T0=$(date +%s); END=$((T0 + ${CALL_S:-570})); TAG=${TAG:-w1}
[ -d /tmp/site/dotenv ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/kb/*.whl || exit 1
export PYTHONPATH=$PWD/src:/tmp/site
mkdir -p /tmp/vk
{ nvidia-smi -L; nproc; date; uptime; free -g | head -2; python3 -c "import torch; print(torch.__version__)"; git log --oneline -1; } > /tmp/vk/env_$TAG.txt 2>&1
VK="python3 benchmarks/vs_kernelbench.py --external .dev/kernels.jsonl --gpus 2 --kernelbench .kb --out /tmp/vk/vs_kb_all.json --markdown /tmp/vk/vs_kb_all.md --work /tmp/vskb_all"
if [ -z "${RESUME:-}" ]; then
  timeout -k 10 $((END - $(date +%s) - 5)) $VK --skip-kernelbench --stop-at $((END - 40)) > /tmp/vk/log_km_$TAG.txt 2>&1
  echo "kernelmill side rc $? at +$(( $(date +%s) - T0 )) s; $(uptime)" >> /tmp/vk/env_$TAG.txt
  timeout 90 python3 benchmarks/timing_cost.py --rounds 5 --json /tmp/vk/timing_cost.json > /tmp/vk/timing_cost.txt 2>&1
  echo "timing_cost rc $? at +$(( $(date +%s) - T0 )) s" >> /tmp/vk/env_$TAG.txt
fi
LEFT=$((END - $(date +%s)))
if [ $LEFT -gt 60 ]; then
  timeout -k 10 $((LEFT - 5)) $VK --resume --stop-at $((END - ${KB_MARGIN:-40})) > /tmp/vk/log_kb_$TAG.txt 2>&1
  echo "vs_kernelbench rc $? at +$(( $(date +%s) - T0 )) s; $(uptime)" >> /tmp/vk/env_$TAG.txt
fi
LEFT=$((END - $(date +%s)))
KB_DONE=$(python3 -c "import json; r=json.load(open('/tmp/vk/vs_kb_all.json')); print(int(len(r.get('kernelbench',{}).get('eval',{}))>=len(r['candidates'])))" 2>/dev/null)
if [ -n "${GPU_TESTS:-}" ] && [ "$KB_DONE" = 1 ] && [ $LEFT -gt 90 ]; then
  WHEELS=.whl/ts CALL_S=$((LEFT - 10)) GPUS=2 TAG=$TAG LOGS=/tmp/vk/gpu_logs \
    QUEUE="80||tests/verify/test_builtin_candidates.py;60||tests/verify/test_oracle.py;55||tests/ptx/test_evaluate_gpu.py;120||tests/verify/test_timing_gpu.py" \
    bash .ci/gpu_suite > /tmp/vk/gpu_suite_$TAG.txt 2>&1
  echo "gpu_suite rc $? at +$(( $(date +%s) - T0 )) s" >> /tmp/vk/env_$TAG.txt
fi
cp /tmp/vskb_all/kb_logs/*.log /tmp/vk/kb_logs/ 2>/dev/null || { mkdir -p /tmp/vk/kb_logs; cp /tmp/vskb_all/kb_logs/*.log /tmp/vk/kb_logs/ 2>/dev/null; }
tar czf $OUT/vk_$TAG.tgz -C /tmp vk
grep -E "kernelmill verify|compile phase|stop-at|ratio|nothing left" /tmp/vk/log_*_$TAG.txt | tail -8
tail -3 /tmp/vk/log_km_$TAG.txt /tmp/vk/log_kb_$TAG.txt 2>/dev/null; cat /tmp/vk/timing_cost.txt 2>/dev/null | cut -c1-220; cat /tmp/vk/env_$TAG.txt
python3 - <<'PY'
import json, collections
try:
    rows = [json.loads(l) for l in open('/tmp/vk/vs_kb_all.verdicts.jsonl')]
except OSError:
    rows = []
print("kernelmill statuses", collections.Counter(r.get('status') for r in rows), "versions", {r.get('harness_version') for r in rows})
PY

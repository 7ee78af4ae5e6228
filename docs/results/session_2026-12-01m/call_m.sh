#!/bin/bash
# Session 30 (nvidia-h200, one GPU), harness 0.5.26 (the kineto move on the device for the first time): kernelmill's side of
# vs_kernelbench on all 90 of cuda-l1, --gpu-watch, fresh build cache and XDG cache each run.
#   call 1 (fresh machine): TAG=m1 LEND=on GPU_TESTS="..." bash call_m.sh    (cold: nothing ran before)
#   call 2 (warm):          TAG=m2 LEND=off ... (same machine, fresh caches: labelled warm)
#   RPG=n: --runs-per-gpu n (default: the harness's auto, 2)
# Carry `.kb .dev/kernels.jsonl .whl/kb .whl/ts`.
export PYTHONUNBUFFERED=1 XDG_CACHE_HOME=/tmp/xdg_$TAG
T0=$(date +%s); END=$((T0 + ${CALL_S:-570})); TAG=${TAG:-m1}
export XDG_CACHE_HOME=/tmp/xdg_$TAG
[ -d /tmp/site/dotenv ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/kb/*.whl || exit 1
export PYTHONPATH=$PWD/src:/tmp/site
mkdir -p /tmp/vk
{ nvidia-smi -L; nproc; date; uptime; free -g | head -2; python3 -c "import torch; print(torch.__version__)"; } > /tmp/vk/env_$TAG.txt 2>&1
ARG=""; [ "${LEND:-on}" = off ] && ARG="--kernelmill-arg=--no-gpu-lend"
[ -n "${RPG:-}" ] && ARG="$ARG --kernelmill-arg=--runs-per-gpu=$RPG"
if [ -n "${RUN90:-1}" ] && [ "${RUN90:-1}" != 0 ]; then
  timeout -k 10 ${KM_S:-400} python3 benchmarks/vs_kernelbench.py --external .dev/kernels.jsonl --gpus 1 --kernelbench .kb \
    --out /tmp/vk/vs_km_$TAG.json --markdown /tmp/vk/vs_km_$TAG.md --work /tmp/vskb_$TAG --skip-kernelbench --gpu-watch $ARG \
    > /tmp/vk/log_km_$TAG.txt 2>&1
  echo "kernelmill side ($LEND, rpg ${RPG:-auto}) rc $? at +$(( $(date +%s) - T0 )) s; $(uptime)" >> /tmp/vk/env_$TAG.txt
fi
LEFT=$((END - $(date +%s)))
if [ -n "${GPU_TESTS:-}" ] && [ $LEFT -gt 90 ]; then
  WHEELS=.whl/ts CALL_S=$((LEFT - 30)) GPUS=1 TAG=$TAG LOGS=/tmp/vk/gpu_logs QUEUE="$GPU_TESTS" \
    bash .ci/gpu_suite > /tmp/vk/gpu_suite_$TAG.txt 2>&1
  echo "gpu_suite rc $? at +$(( $(date +%s) - T0 )) s" >> /tmp/vk/env_$TAG.txt
fi
tar czf $OUT/vk_$TAG.tgz -C /tmp vk
grep -E "kernelmill verify|GPU 0:|wall|statuses" /tmp/vk/log_km_$TAG.txt 2>/dev/null | tail -6 | cut -c1-300
tail -4 /tmp/vk/log_km_$TAG.txt 2>/dev/null | cut -c1-300; cat /tmp/vk/env_$TAG.txt
tail -8 /tmp/vk/gpu_logs/run_$TAG.txt 2>/dev/null
python3 - <<'PY'
import json, collections, glob
for f in sorted(glob.glob('/tmp/vk/vs_km_*.verdicts.jsonl')):
    rows = [json.loads(l) for l in open(f)]
    lent = [r for r in rows if (r.get('phases') or {}).get('gpu_lent')]
    print(f, collections.Counter(r.get('status') for r in rows), {r.get('harness_version') for r in rows},
          "lent runs", len(lent), "lent s", round(sum(r['phases'].get('gpu_lent_s', 0) for r in lent), 1),
          "refused", sum((r.get('phases') or {}).get('gpu_lend_refused', 0) for r in rows),
          "escaped", sum((r.get('phases') or {}).get('gpu_lend_escaped', 0) for r in rows))
PY

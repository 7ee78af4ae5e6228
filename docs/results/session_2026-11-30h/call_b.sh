#!/bin/bash
# Issue 40 target 1 in parts: kernelmill first on a fresh machine (nothing prepared, a fresh build cache), then
# KernelBench's harness on the same machine, same candidates, same trials (5 correctness, its 100 perf trials),
# `--gpus 1` (the machine has one GPU). Carry `.kb .dev .whl/kb`.
#   call 1 (fresh machine):      PART=1/4 TAG=b1 bash docs/results/session_2026-11-30h/call_b.sh
#   call 2 (the warm machine):   PART=1/4 TAG=b2 RESUME=--resume bash docs/results/session_2026-11-30h/call_b.sh
# /tmp/vk holds the part's results between the calls (a warm machine keeps /tmp); every call copies it to $OUT.
export PYTHONUNBUFFERED=1 XDG_CACHE_HOME=/tmp/xdg
[ -d /tmp/site/dotenv ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/kb/*.whl || exit 1
export PYTHONPATH=$PWD/src:/tmp/site
T0=$(date +%s); END=$((T0 + ${CALL_S:-575})); TAG=${TAG:-b1}; P=${PART:-1/4}; N=${P/\//of}
mkdir -p /tmp/vk
{ nvidia-smi -L; nproc; date; uptime; free -g | head -2; python3 -c "import torch; print(torch.__version__)"; } > /tmp/vk/env_$TAG.txt 2>&1
timeout -k 10 $((END - $(date +%s) - 5)) python3 benchmarks/vs_kernelbench.py --external .dev/kernels.jsonl --part $P \
  --gpus 1 --kernelbench .kb --out /tmp/vk/vs_kb_$N.json --markdown /tmp/vk/vs_kb_$N.md --work /tmp/vskb_$N \
  --stop-at $((END - ${KB_MARGIN:-40})) $RESUME > /tmp/vk/log_$TAG.txt 2>&1
echo "vs_kernelbench rc $? at +$(( $(date +%s) - T0 )) s; $(uptime)" >> /tmp/vk/env_$TAG.txt
cp /tmp/vskb_$N/kb_logs/*.log /tmp/vk/ 2>/dev/null; mkdir -p $OUT/vk && cp -r /tmp/vk/. $OUT/vk/
grep -E "kernelmill verify|compile phase|stop-at|ratio|per minute" /tmp/vk/log_$TAG.txt | tail -8; tail -4 /tmp/vk/log_$TAG.txt; cat /tmp/vk/env_$TAG.txt

#!/bin/bash
# Session 25, call c (a fresh nvidia-h200; carry `.kb .dev/vk1 .whl/kb .whl/ts`): part 1/4's KernelBench side
# finished (its last candidate, cut at call b1's limit, hung on the build lock that cut left in b2), then
# test_evaluate_gpu.py with the `ptx` extra installed (tree-sitter: call a's failure was its absence).
export PYTHONUNBUFFERED=1 XDG_CACHE_HOME=/tmp/xdg
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/kb/*.whl .whl/ts/*.whl || exit 1
export PYTHONPATH=$PWD/src:/tmp/site
T0=$(date +%s); mkdir -p /tmp/vk $OUT/c && cp .dev/vk1/* /tmp/vk/
{ nvidia-smi -L; nproc; date; uptime; } > $OUT/c/env.txt 2>&1
timeout -k 10 ${KB_S:-300} python3 benchmarks/vs_kernelbench.py --external .dev/kernels.jsonl --part 1/4 --gpus 1 \
  --kernelbench .kb --out /tmp/vk/vs_kb_1of4.json --markdown /tmp/vk/vs_kb_1of4.md --work /tmp/vskb_1of4 \
  --resume --skip-kernelmill > $OUT/c/log_c.txt 2>&1
echo "vs_kernelbench rc $? at +$(( $(date +%s) - T0 )) s" >> $OUT/c/env.txt
cp /tmp/vk/vs_kb_1of4.json /tmp/vk/vs_kb_1of4.md $OUT/c/; cp /tmp/vskb_1of4/kb_logs/*.log $OUT/c/ 2>/dev/null
timeout -k 10 120 python3 -m pytest -m gpu -q -rA -p no:cacheprovider tests/ptx/test_evaluate_gpu.py > $OUT/c/evaluate_gpu.txt 2>&1
echo "test_evaluate_gpu rc $? at +$(( $(date +%s) - T0 )) s; $(uptime)" >> $OUT/c/env.txt
grep -E "kb \[|compile phase|ratio" $OUT/c/log_c.txt | tail -5; tail -2 $OUT/c/evaluate_gpu.txt; cat $OUT/c/env.txt

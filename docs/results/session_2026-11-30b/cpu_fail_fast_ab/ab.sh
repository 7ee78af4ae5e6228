#!/bin/bash
# alternated: 0.5.11, 0.5.12, 0.5.11, 0.5.12 -- each a cold cache
for rep in 1 2; do
for v in v0511 head; do
  SRC=/tmp/ffab/v0511/src; [ $v = head ] && SRC=/work/main/src
  rm -rf /tmp/ffab/cache_$v$rep
  T0=$(date +%s.%N)
  PYTHONPATH=/tmp/emu:$SRC TORCH_CUDA_ARCH_LIST=9.0 KERNELMILL_CACHE=/tmp/ffab/cache_$v$rep timeout 1500 python -m kernelmill verify /tmp/ffab/tasks /tmp/ffab/samples.jsonl --out /tmp/ffab/v_$v$rep.jsonl --device cpu --profile small > /tmp/ffab/log_$v$rep.txt 2>&1
  echo "$v rep$rep rc $? wall $(python3 -c "import time;print(round(time.time()-$T0,1))")" >> /tmp/ffab/walls.txt
done; done

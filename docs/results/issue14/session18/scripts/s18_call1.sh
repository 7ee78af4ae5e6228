#!/usr/bin/env bash
# Session 18, device call 1: resident supervisors on a GPU (test, then throughput against spares).
set -u
export PYTHONPATH=$PWD/src
mkdir -p $OUT/c1
nvidia-smi -L | tee $OUT/c1/gpu.txt
git log --oneline -1 | tee -a $OUT/c1/gpu.txt
timeout 150 python -m pytest -q -m gpu -s tests/verify/test_resident.py 2>&1 | tail -25 | tee $OUT/c1/test_resident.txt
timeout 420 python benchmarks/verify_throughput.py --language cuda,triton,torch --copies 1 \
    --resident-sweep on,off,on --lock-share --out $OUT/c1/vt_resident_sweep.json > $OUT/c1/vt.log 2>&1
tail -25 $OUT/c1/vt.log

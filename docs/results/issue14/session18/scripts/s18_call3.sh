#!/usr/bin/env bash
# Session 18, device call 3: the spare/resident GPU test both ways, the resident GPU test, guards' cost with residents.
set -u
export PYTHONPATH=$PWD/src
mkdir -p $OUT/c3
nvidia-smi -L | tee $OUT/c3/gpu.txt
timeout 240 python -m pytest -q -m gpu tests/verify/test_zygote.py tests/verify/test_resident.py 2>&1 | tail -8 | tee $OUT/c3/gpu_tests.txt
timeout 300 python benchmarks/guards_cost.py --device cuda --languages cuda,triton,torch --levels off,standard --repeat 2 \
    --json $OUT/c3/guards_cost.json > $OUT/c3/guards_cost.log 2>&1
tail -12 $OUT/c3/guards_cost.log

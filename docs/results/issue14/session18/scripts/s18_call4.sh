#!/usr/bin/env bash
# Session 18, device call 4 (final code): GPU tests of residents, the CUDA reference hunter through a resident,
# and 66-candidate passes with 2 and 3 runs per GPU (residents, the default).
set -u
export PYTHONPATH=$PWD/src
mkdir -p $OUT/c4
nvidia-smi -L | tee $OUT/c4/gpu.txt
timeout 200 python -m pytest -q -m gpu tests/verify/test_resident.py tests/verify/test_zygote.py \
    tests/guards/test_no_reference.py 2>&1 | tail -8 | tee $OUT/c4/gpu_tests.txt
timeout 330 python benchmarks/verify_throughput.py --language cuda,triton,torch --copies 2 \
    --runs-sweep 2,3 --lock-share --out $OUT/c4/vt_runs_sweep.json > $OUT/c4/vt.log 2>&1
tail -10 $OUT/c4/vt.log

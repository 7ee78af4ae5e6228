#!/usr/bin/env bash
# Session 18, device call 2: 66-candidate passes (residents, then spares), the GPU suite, serving.
set -u
export PYTHONPATH=$PWD/src
mkdir -p $OUT/c2
nvidia-smi -L | tee $OUT/c2/gpu.txt
timeout 250 python benchmarks/verify_throughput.py --language cuda,triton,torch --copies 2 \
    --resident-sweep on,off --lock-share --out $OUT/c2/vt_resident_sweep.json > $OUT/c2/vt.log 2>&1
tail -8 $OUT/c2/vt.log
KM_GPU_PART=hostile timeout 260 python -m pytest -q -m gpu tests/guards/test_gpu_corpus.py tests/verify/test_cuda_ipc.py \
    tests/verify/test_zygote.py tests/verify/test_devices.py tests/verify/test_resident.py 2>&1 | tail -15 | tee $OUT/c2/gpu_tests.txt
timeout 80 python benchmarks/serve_latency.py --device cuda --requests 12 --modes long-lived --json $OUT/c2/serve.json \
    > $OUT/c2/serve.log 2>&1; tail -6 $OUT/c2/serve.log

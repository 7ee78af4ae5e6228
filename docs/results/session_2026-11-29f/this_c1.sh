#!/bin/bash
# call 1 (fresh nvidia-h200-x2): stage the first CuTe DSL part, then the queue
mkdir -p /tmp/cute && cp .whl/cute_parts/cu13.tar.xz.part0* .whl/cute/*.whl /tmp/cute/ 2>/dev/null
CALL_S=${CALL_S:-520} TAG=c1 QUEUE="200|KM_GPU_PART=hostile:1/2|tests/guards/test_gpu_corpus.py;200|KM_GPU_PART=hostile:2/2|tests/guards/test_gpu_corpus.py;200|KM_GPU_PART=builtin:1/3|tests/guards/test_gpu_corpus.py;200|KM_GPU_PART=builtin:2/3|tests/guards/test_gpu_corpus.py;170||tests/verify/test_load_gpu.py;100||tests/guards/test_no_reference.py;95||tests/verify/test_zygote.py;90||tests/verify/test_timing_gpu.py;80||tests/verify/test_cuda_ipc.py;75||tests/verify/test_builtin_candidates.py;70||tests/guards/test_cudart.py" bash docs/results/session_2026-11-29f/gpu_queue.sh
ls -la /tmp/cute

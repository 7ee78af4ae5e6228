#!/bin/bash
# call 3 (the same warm machine; carry .kb .whl/ts .whl/cute_parts/cu13.tar.xz.part02): the CuTe DSL wheel put
# together (its tests first in the queue), then whatever is pending
cp .whl/cute_parts/cu13.tar.xz.part02 /tmp/cute/ && python3 -m pip install -q --no-index --no-deps --no-compile \
  --target /tmp/cutesite /tmp/cute/*.whl && cat /tmp/cute/cu13.tar.xz.part0* | xz -d | tar x -C /tmp/cutesite
CALL_S=${CALL_S:-520} TAG=c3 QUEUE_FRONT="60|PYX=/tmp/cutesite:/tmp/cutesite/nvidia_cutlass_dsl/dsl_packages|tests/verify/test_cute_dsl_gpu.py" \
  bash docs/results/session_2026-11-29f/gpu_queue.sh

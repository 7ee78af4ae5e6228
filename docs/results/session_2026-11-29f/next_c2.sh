#!/bin/bash
# call 2 (the same warm machine, at once; carry .kb .whl/ts .whl/cute_parts/cu13.tar.xz.part01): the queue goes on
cp .whl/cute_parts/cu13.tar.xz.part01 /tmp/cute/
CALL_S=${CALL_S:-520} TAG=c2 bash docs/results/session_2026-11-29f/gpu_queue.sh

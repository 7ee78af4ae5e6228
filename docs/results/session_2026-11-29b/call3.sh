#!/bin/bash
# Session 10, device call 3 (the same warm machine, right after call 2): the CuTe DSL wheel put
# together and installed, the CuTe DSL tests (issue 41); the audit resumed if call 1 cut it
# (issue 43); then the calibration suite on the GPU (issue 42), resumable over calls.
export PYTHONUNBUFFERED=1 XDG_CACHE_HOME=/tmp/xdg
T0=$(date +%s); END=$((T0 + ${CALL_S:-580}))
{ date; ls /tmp/cute; } > $OUT/env.txt 2>&1
cp .whl/cute_parts/cu13.tar.xz.part02 /tmp/cute/ && cat /tmp/cute/cu13.tar.xz.part0* | md5sum >> $OUT/env.txt
# the cu13 wheel travels as an xz tar of its unpacked files (92 MB zipped is over a call's 64 MiB):
# unpacked into the target folder (after pip put the other wheels there) it is what pip --target
# makes of the wheel
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/cutesite /tmp/cute/*.whl >> $OUT/env.txt 2>&1
cat /tmp/cute/cu13.tar.xz.part0* | xz -d | tar x -C /tmp/cutesite >> $OUT/env.txt 2>&1
echo "installed at +$(( $(date +%s) - T0 )) s" >> $OUT/env.txt
PYTHONPATH=$PWD/src:/tmp/cutesite:/tmp/cutesite/nvidia_cutlass_dsl/dsl_packages timeout 240 python3 -m pytest -q \
  tests/verify/test_cute_dsl_gpu.py tests/verify/test_cute_dsl_package.py tests/verify/test_cute_dsl.py \
  -p no:cacheprovider --basetemp /tmp/ptc -rA -s > $OUT/cute.log 2>&1
echo "cute tests rc $? at +$(( $(date +%s) - T0 )) s" >> $OUT/env.txt
export PYTHONPATH=$PWD/src
SRC=../shared/external/cuda-l1/kernels.jsonl; [ -f $SRC ] || SRC=.dev/kernels.jsonl
if [ "$(wc -l < /tmp/audit/verdicts.jsonl)" -lt 90 ]; then
  timeout -k 10 $((END - $(date +%s) - 25)) python3 -m kernelmill audit $SRC -o /tmp/audit --device cuda > $OUT/audit2.log 2>&1
  echo "audit rc $? at +$(( $(date +%s) - T0 )) s; verdicts $(wc -l < /tmp/audit/verdicts.jsonl)" >> $OUT/env.txt
  pkill -f "kernelmill audit" 2>/dev/null; cp -r /tmp/audit $OUT/audit
fi
R=; [ -f /tmp/cal/calibration_cuda.partial.json ] && R=--resume
LEFT=$((END - $(date +%s) - 20))
if [ $LEFT -gt 60 ]; then
  timeout -k 10 $LEFT python3 benchmarks/calibration/run.py --device cuda --out /tmp/cal --cache-dir /tmp/calcache $R > $OUT/cal.log 2>&1
  echo "calibration rc $? at +$(( $(date +%s) - T0 )) s" >> $OUT/env.txt
  pkill -f "calibration/run.py" 2>/dev/null; mkdir -p $OUT/cal && cp /tmp/cal/calibration_cuda.* $OUT/cal/
fi
mkdir -p $OUT/a && cp /tmp/audit/verdicts.jsonl $OUT/a/; cat $OUT/env.txt; tail -n 25 $OUT/cute.log; tail -n 5 $OUT/cal.log 2>/dev/null

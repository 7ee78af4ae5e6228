#!/bin/bash
# Session 9, device call 2 (nvidia-h200-x2). Card 0: why kernelmill's KernelBench-convention
# host path of a launch-bound reference is several times KernelBench's (benchmarks/diag/
# kb_host_path.py: plain / bench / loaded / forked), then kernelmill alone on card 0 (one run
# at a time, builds done by a first run, the second timed with nothing else running), then
# test_timing_gpu.py. Card 1 meanwhile: the independent harness on more timed rows (resume).
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/kb/*.whl || exit 1
export PYTHONPATH=$PWD/src:/tmp/site
S7=docs/results/issue39/session7
T0=$(date +%s); END=$((T0 + ${CALL_S:-555}))
{ nvidia-smi -L; nproc; date; } > $OUT/env.txt
cp .dev/fidA.json $OUT/fidA.json
CUDA_VISIBLE_DEVICES=1 python3 benchmarks/timing_fidelity.py --device cuda --external .dev/kernels.jsonl --no-corpus \
  --kernelbench .kb --kernelbench-rows none --verdicts $S7/run1.verdicts.jsonl --second-verdicts $S7/run2.verdicts.jsonl \
  --out $OUT/fidA.json --resume --measure-timeout 120 --stop-at $((END - 15)) --markdown $OUT/fidA.md > $OUT/fidA.log 2>&1 &
K=.kb/tasks
CUDA_VISIBLE_DEVICES=0 python3 benchmarks/diag/kb_host_path.py $K/level1/100_HingeLoss.py $K/level2/14_Gemm_Divide_Sum_Scaling.py \
  $K/level1/39_L2Norm_.py $K/level2/45_Gemm_Sigmoid_LogSumExp.py --load 16 --out $OUT/host_path.json > $OUT/diag.log 2>&1
echo "diag done at +$(( $(date +%s) - T0 )) s" >> $OUT/env.txt
CUDA_VISIBLE_DEVICES=0 python3 benchmarks/timing_fidelity.py --device cuda --external .dev/kernels.jsonl --no-corpus \
  --kernelbench .kb --kernelbench-rows none --only cudal1_a100_L1_100,cudal1_a100_L2_14,cudal1_a100_L1_39,cudal1_l40_L2_45,cudal1_l40_L2_68,cudal1_a100_L1_31 \
  --repeat --kernelmill-arg=--runs-per-gpu --kernelmill-arg=1 --out $OUT/quiet.json --stop-at 1 >> $OUT/diag.log 2>&1
echo "quiet verify done at +$(( $(date +%s) - T0 )) s" >> $OUT/env.txt
CUDA_VISIBLE_DEVICES=0 timeout $((END - $(date +%s) - 10)) python3 -m pytest -q -m gpu tests/verify/test_timing_gpu.py -p no:cacheprovider \
  --basetemp /tmp/pt0 -rA --durations 8 > $OUT/gpu_timing.log 2>&1
echo "gpu tests done at +$(( $(date +%s) - T0 )) s" >> $OUT/env.txt
wait
cat $OUT/env.txt; grep -E "events mean|ERROR" $OUT/diag.log; tail -3 $OUT/gpu_timing.log

#!/usr/bin/env bash
# The TileLang seeds the first H100 run left unverified (the rest of part 2 of
# `KM_PARTS=2 KM_PART=2`, docs/results/benchmarks_history.md) plus level1/13_TransposedMatmul, whose seed now sums
# K in slices (it was incorrect there; SLICES = 2 since this script's H100 run), through benchmarks/tilelang_seeds_device.sh, then
# benchmarks/diag/tilelang_13_order.py (cuBLAS's kernels and summation order for that task, and
# which summation orders of the seed pass against it).
#
#   OUT=/tmp/o bash benchmarks/tilelang_seeds_rest_device.sh
#
# About 3-4 minutes on an H100 (10 seeds, 16 kernels; a guarded run is 5-12 s); at most about
# 7 minutes: compiling is cut at 120 s, verify at 180 s, the order diagnostic at 90 s.
# $OUT gets seeds.log, compile.jsonl, verdicts.jsonl, summary.json, summary.md (the seeds) and
# order13.json, order13.log (the diagnostic). Exit status: that of verify.
set -uo pipefail

OUT=${OUT:?set OUT to the results folder}
PY=${PYTHON:-python3}
REST=level1/23_GroupNorm,level1/25_LogSoftmax,level1/29_KLDivLoss,level2/01_Gemm_Bias_ReLU,level2/04_LayerNorm_GELU,level2/07_Gemm_Sigmoid_Sum,level2/09_SwiGLU,level2/14_Gemm_GELU_bf16,level3/06_CausalSelfAttention_fp16
mkdir -p "$OUT"

KM_TASKS=${KM_TASKS:-level1/13_TransposedMatmul,$REST} \
KM_COMPILE_TIMEOUT=${KM_COMPILE_TIMEOUT:-120} KM_VERIFY_TIMEOUT=${KM_VERIFY_TIMEOUT:-180} \
    OUT="$OUT" PYTHON="$PY" bash benchmarks/tilelang_seeds_device.sh
RC=$?

echo; echo "=== cuBLAS's summation order for level1/13_TransposedMatmul"
PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" TILELANG_PRINT_ON_COMPILATION=0 PYTHONUNBUFFERED=1 \
    timeout "${KM_ORDER_TIMEOUT:-90}" "$PY" benchmarks/diag/tilelang_13_order.py --out "$OUT/order13.json" \
    > "$OUT/order13.log" 2>&1
echo "order diagnostic exit: $?"
tail -n 20 "$OUT/order13.log"
exit $RC

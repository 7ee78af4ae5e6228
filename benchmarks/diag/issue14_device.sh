#!/usr/bin/env bash
# Issue 14 on one GPU: kernelmill vs KernelBench's harness on the same 31
# candidates (every 5th GPU candidate of benchmarks/corpus_llm; kernelmill first,
# then KernelBench into the same OUTDIR/subset.json, compared in subset.md), then
# kernelmill alone on the builtin-like part (92), with nvidia-smi sampling.
#   bash benchmarks/diag/issue14_device.sh OUTDIR [RUNS_PER_GPU]
# KM_EXCHANGE=file passes --exchange file (default auto: CUDA IPC between supervisor and candidate).
# KB_SUBSET_S=0 skips KernelBench's harness.
# KM_STANDBY=N passes --standby N (spares per GPU; default auto). KM_PREPARE=1 builds the
# precompiled torch headers of the candidates' flag sets first, timed apart (vs_kernelbench --prepare-headers).
# ONLY=name,name,... replaces the 31-candidate subset; KM_BUILTIN_S=0 skips the builtin pass.
# Needs KernelBench's folder (KERNELBENCH_DIR, default .kb) and the wheels of what it imports
# that the machine lacks (KB_WHEELS, default .whl/kb: pydantic and its parts, python-dotenv),
# installed into /tmp/site.
set -uo pipefail
OUT=${1:?OUTDIR}; RPG=${2:-0}
mkdir -p "$OUT"
export PYTHONPATH=$PWD/src:/tmp/site PYTHONUNBUFFERED=1
KB=${KERNELBENCH_DIR:-.kb}
W=${KB_WHEELS:-.whl/kb}
[ -d "$W" ] && python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$W"/*.whl 2>&1 | grep -v WARNING | tail -3
S="b2_add_rmsnorm__cuda_lazy_try,b2_conv_bn_relu__torch_manual_stats,b2_gemm_bias_relu__cuda_lazy_try,b2_gemm_sigmoid_sum__torch_addmm,b2_matmul_scale_residual__cuda_module_functions,b2_swiglu__torch_concat_gemm,b_gelu__cuda_lazy_attr_float4,b_layernorm__cuda_module_pybind_cpp,b_leakyrelu__cuda_wrong_slope,b_logsoftmax__torch_logsumexp,b_mean__cuda_module_functions,b_mse__cuda_two_extensions_lazy,b_relu__cuda_module_functions,b_rmsnorm__cuda_init_local,b_rmsnorm__triton_autotune,b_silu__cuda_lazy_global_float4,b_softmax__cuda_module_functions,b_square_matmul__cuda_module_functions,b_sum__torch_matmul_ones,kb1_01_square_matmul__triton_autotune,kb1_17_matmul_transposed_b__cuda_lazy_global,kb1_40_layernorm__cuda_two_extensions_lazy,kb1_88_newgelu__cuda_module_pybind_cpp_float4s,kb2_09_matmul_sub_mul_relu__triton_jit,kb2_29_matmul_mish_mish__cuda_init_try,kb2_40_matmul_scale_res__torch_mul,kb2_57_conv_relu_hardswish__torch_channels_last,kb2_69_conv_hardswish_relu__cuda_module_pybind_cuda_inplace,kb2_71_conv_div_leaky__cuda_init_float4,kb2_76_gemm_add_relu__torch_addmm,kb2_86_matmul_div_gelu__torch_addmm_alpha"
S=${ONLY:-$S}
EXTRA=()
[ -n "${KM_STANDBY:-}" ] && EXTRA+=(--kernelmill-arg=--standby=$KM_STANDBY)
[ "${KM_PREPARE:-0}" = 1 ] && EXTRA+=(--prepare-headers)
smi() { nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used --format=csv,noheader,nounits -lms 200 > "$1" & echo $!; }
P=$(smi "$OUT/smi_subset.csv")
timeout ${KM_SUBSET_S:-200} python benchmarks/vs_kernelbench.py --device cuda --kernelbench "$KB" --only "$S" --skip-kernelbench \
   --out "$OUT/subset.json" --kernelmill-arg=--runs-per-gpu=$RPG --kernelmill-arg=--exchange=${KM_EXCHANGE:-auto} "${EXTRA[@]}" 2>&1 | grep -v "^\s*$" | tail -25
kill $P
[ "${KB_SUBSET_S:-300}" != 0 ] && timeout ${KB_SUBSET_S:-300} python benchmarks/vs_kernelbench.py --device cuda --kernelbench "$KB" --only "$S" --skip-kernelmill \
   --resume --out "$OUT/subset.json" --markdown "$OUT/subset.md" 2>&1 | grep -E "kernelbench:|kb \[|Ratio|Verdicts|^\| " | tail -60
[ "${KM_BUILTIN_S:-240}" = 0 ] && { python benchmarks/phase_table.py "$OUT/subset.verdicts.jsonl" --smi "$OUT/smi_subset.csv"; rm -rf "$OUT"/*.work; exit 0; }
P=$(smi "$OUT/smi_builtin.csv")
timeout ${KM_BUILTIN_S:-240} python benchmarks/vs_kernelbench.py --device cuda --kernelbench "$KB" --kind builtin --skip-kernelbench \
   --out "$OUT/builtin_km.json" --kernelmill-arg=--runs-per-gpu=$RPG --kernelmill-arg=--exchange=${KM_EXCHANGE:-auto} "${EXTRA[@]}" 2>&1 | grep -v "^\s*$" | tail -8
kill $P
echo "== subset"; python benchmarks/phase_table.py "$OUT/subset.verdicts.jsonl" --smi "$OUT/smi_subset.csv"
echo "== builtin"; python benchmarks/phase_table.py "$OUT/builtin_km.verdicts.jsonl" --smi "$OUT/smi_builtin.csv"
rm -rf "$OUT"/*.work

set -o pipefail; export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src:/tmp/site; nvidia-smi -L; date
smi() { nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used --format=csv,noheader,nounits -lms 200 > "$1" & echo $!; }
for m in on off; do
  cp .whl/kb10.json $OUT/$m.json
  A=""; [ $m = off ] && A="--kernelmill-arg=--no-merge-units"
  P=$(smi $OUT/smi_$m.csv)
  timeout 200 python3 benchmarks/vs_kernelbench.py --device cuda --kernelbench .kb --only b_relu__cuda_module_functions,b_layernorm__cuda_module_pybind_cpp,kb1_88_newgelu__cuda_module_pybind_cpp_float4s,kb2_69_conv_hardswish_relu__cuda_module_pybind_cuda_inplace,b_rmsnorm__cuda_init_local,kb2_29_matmul_mish_mish__cuda_init_try,b2_add_rmsnorm__cuda_lazy_try,kb1_40_layernorm__cuda_two_extensions_lazy,b_leakyrelu__cuda_wrong_slope,b_rmsnorm__triton_autotune,kb2_09_matmul_sub_mul_relu__triton_jit,b2_conv_bn_relu__torch_manual_stats,kb2_57_conv_relu_hardswish__torch_channels_last,kb2_86_matmul_div_gelu__torch_addmm_alpha --skip-kernelbench --resume $A --out $OUT/$m.json --markdown $OUT/$m.md 2>&1 | grep -E "kernelmill|Ratio|Verdicts|^\| (Kernel|kernelmill)"
  kill $P
  python3 benchmarks/phase_table.py $OUT/$m.verdicts.jsonl --smi $OUT/smi_$m.csv 2>&1 | head -40
  rm -rf $OUT/*.work
done
date

set -o pipefail; export PYTHONUNBUFFERED=1; nvidia-smi -L; nproc; date
S=b_relu__cuda_module_functions,b_layernorm__cuda_module_pybind_cpp,kb1_88_newgelu__cuda_module_pybind_cpp_float4s,kb2_69_conv_hardswish_relu__cuda_module_pybind_cuda_inplace,b_rmsnorm__cuda_init_local,kb2_29_matmul_mish_mish__cuda_init_try,b2_add_rmsnorm__cuda_lazy_try,kb1_40_layernorm__cuda_two_extensions_lazy,b_leakyrelu__cuda_wrong_slope,b_rmsnorm__triton_autotune,kb2_09_matmul_sub_mul_relu__triton_jit,b2_conv_bn_relu__torch_manual_stats,kb2_57_conv_relu_hardswish__torch_channels_last,kb2_86_matmul_div_gelu__torch_addmm_alpha
R=/tmp/res; mkdir -p $R
km() {  # label src extra-args...
  m=$1; src=$2; shift 2
  vmstat 1 > $R/vmstat_$m.log & V=$!
  PYTHONPATH=$src timeout 150 python3 benchmarks/cpu_by_process.py --out $R/cpu_$m.json -- python3 benchmarks/vs_kernelbench.py --device cuda --kernelbench .kb --only $S --skip-kernelbench --out $R/$m.json --markdown $R/$m.md "$@" 2>&1 | grep -E "kernelmill verify|^verify:|cpu_by_process|CPU-s"
  kill $V
  PYTHONPATH=$PWD/src python3 benchmarks/phase_table.py $R/$m.verdicts.jsonl --gantt 2>&1 | grep -E "^(build_s|run_wall|spare_warm|spare_wait|timeline)"
  awk 'NR>2{n++; us+=$13; sy+=$14; id+=$15; if ($15<10) sat++} END{printf "vmstat: %d s, cpu us %.0f%% sy %.0f%% idle %.0f%%, seconds with idle<10%%: %d\n", n, us/n, sy/n, id/n, sat}' $R/vmstat_$m.log
  rm -rf $R/$m.work
}
km new $PWD/src
km old $PWD/cmp_old/src
km new2 $PWD/src
PYTHONPATH=$PWD/src timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider tests/verify/test_zygote.py 2>&1 | tail -3
tar czf $OUT/c1.tgz -C $R .
date

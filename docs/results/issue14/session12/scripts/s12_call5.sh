set -o pipefail; export PYTHONUNBUFFERED=1; nvidia-smi -L; nproc; date
S=b_relu__cuda_module_functions,b_layernorm__cuda_module_pybind_cpp,kb1_88_newgelu__cuda_module_pybind_cpp_float4s,kb2_69_conv_hardswish_relu__cuda_module_pybind_cuda_inplace,b_rmsnorm__cuda_init_local,kb2_29_matmul_mish_mish__cuda_init_try,b2_add_rmsnorm__cuda_lazy_try,kb1_40_layernorm__cuda_two_extensions_lazy,b_leakyrelu__cuda_wrong_slope,b_rmsnorm__triton_autotune,kb2_09_matmul_sub_mul_relu__triton_jit,b2_conv_bn_relu__torch_manual_stats,kb2_57_conv_relu_hardswish__torch_channels_last,kb2_86_matmul_div_gelu__torch_addmm_alpha
R=/tmp/res5; mkdir -p $R
km() {  # label src extra-args...
  m=$1; src=$2; shift 2
  PYTHONPATH=$src timeout 150 python3 benchmarks/cpu_by_process.py --out $R/cpu_$m.json -- python3 benchmarks/vs_kernelbench.py --device cuda --kernelbench .kb --only $S --skip-kernelbench --out $R/$m.json --markdown $R/$m.md "$@" 2>&1 | grep -E "^verify:|cpu_by_process|km (standby|candidate|harness)|compiler \(km build"
  PYTHONPATH=$PWD/src python3 benchmarks/phase_table.py $R/$m.verdicts.jsonl --gantt 2>&1 | grep -E "^(build_s|run_wall|timeline)"
  rm -rf $R/$m.work
}
km cap1 $PWD/src
km pre $PWD/cmp_old/src
km cap2 $PWD/src
PYTHONPATH=$PWD/src timeout 150 python3 -m pytest -q -m gpu -p no:cacheprovider tests/verify/test_devices.py tests/verify/test_zygote.py 2>&1 | tail -2
PYTHONPATH=$PWD/src timeout 130 python3 benchmarks/verify_throughput.py --language cuda,triton,torch --copies 1 --out $R/throughput.json 2>&1 | tail -12
tar czf $OUT/c5.tgz -C $R .
date

set -o pipefail; export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src:/tmp/site; nvidia-smi -L; date
run() {  # label extra-args...
  m=$1; shift
  cp .whl/kb11.json $OUT/$m.json
  ( for t in 12 25 38; do sleep 12; echo "== t~$t s"; ps -eo pid,ni,pcpu,nlwp,rss,etimes,args --sort=-pcpu | cut -c1-150 | head -25; done ) > $OUT/ps_$m.txt 2>&1 &
  timeout 150 python3 benchmarks/vs_kernelbench.py --device cuda --kernelbench .kb --only b_relu__cuda_module_functions,b_layernorm__cuda_module_pybind_cpp,kb1_88_newgelu__cuda_module_pybind_cpp_float4s,kb2_69_conv_hardswish_relu__cuda_module_pybind_cuda_inplace,b_rmsnorm__cuda_init_local,kb2_29_matmul_mish_mish__cuda_init_try,b2_add_rmsnorm__cuda_lazy_try,kb1_40_layernorm__cuda_two_extensions_lazy,b_leakyrelu__cuda_wrong_slope,b_rmsnorm__triton_autotune,kb2_09_matmul_sub_mul_relu__triton_jit,b2_conv_bn_relu__torch_manual_stats,kb2_57_conv_relu_hardswish__torch_channels_last,kb2_86_matmul_div_gelu__torch_addmm_alpha --skip-kernelbench --resume "$@" --out $OUT/$m.json 2>&1 | grep -E "kernelmill verify"
  python3 benchmarks/phase_table.py $OUT/$m.verdicts.jsonl 2>&1 | grep -E "^(build_s|run_wall|spare_warm)"
  rm -rf $OUT/*.work
}
run base
run nice0 --kernelmill-arg=--build-nice=0
run standby0 --kernelmill-arg=--standby=0
date

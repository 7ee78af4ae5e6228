# s13 call 2: the profiler fix (new) against the session's start (old, cmp_old): 14-candidate batch A/B/A, builtin throughput B/A
set -o pipefail; export PYTHONUNBUFFERED=1; nvidia-smi -L; nproc; date
S=b_relu__cuda_module_functions,b_layernorm__cuda_module_pybind_cpp,kb1_88_newgelu__cuda_module_pybind_cpp_float4s,kb2_69_conv_hardswish_relu__cuda_module_pybind_cuda_inplace,b_rmsnorm__cuda_init_local,kb2_29_matmul_mish_mish__cuda_init_try,b2_add_rmsnorm__cuda_lazy_try,kb1_40_layernorm__cuda_two_extensions_lazy,b_leakyrelu__cuda_wrong_slope,b_rmsnorm__triton_autotune,kb2_09_matmul_sub_mul_relu__triton_jit,b2_conv_bn_relu__torch_manual_stats,kb2_57_conv_relu_hardswish__torch_channels_last,kb2_86_matmul_div_gelu__torch_addmm_alpha
R=/tmp/res2; mkdir -p $R
python3 -c "import torch, os, sys; d=os.path.dirname(torch.__file__); print('pyc:', sys.flags.dont_write_bytecode, os.environ.get('PYTHONDONTWRITEBYTECODE'), os.access(d, os.W_OK), os.path.isdir(d+'/_dynamo/__pycache__'), os.path.isdir(d+'/__pycache__'))"
km() {  # label src extra-args...
  m=$1; src=$2; shift 2
  PYTHONPATH=$src timeout 150 python3 benchmarks/cpu_by_process.py --out $R/cpu_$m.json -- python3 benchmarks/vs_kernelbench.py --device cuda --kernelbench .kb --only $S --skip-kernelbench --out $R/$m.json --markdown $R/$m.md "$@" 2>&1 | grep -E "^verify:|cpu_by_process|km (standby|candidate|harness)|compiler \(km build"
  PYTHONPATH=$PWD/src python3 benchmarks/phase_table.py $R/$m.verdicts.jsonl 2>&1 | grep -E "^(build_s|run_wall|spare_warm|guard share|timeline)"
  rm -rf $R/$m.work
}
tp() {
  PYTHONPATH=$2 timeout 140 python3 benchmarks/cpu_by_process.py --out $R/cpu_tp_$1.json -- python3 benchmarks/verify_throughput.py --language cuda,triton,torch --copies 1 --out $R/tp_$1.json 2>&1 | tail -14
}
km new1 $PWD/src
km old1 $PWD/cmp_old/src
km new2 $PWD/src
tp new $PWD/src
tp old $PWD/cmp_old/src
tar czf $OUT/c2.tgz -C $R .
date

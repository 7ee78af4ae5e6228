# s13 call 5 (right after call 4, same machine): kernelmill twice on KernelBench's results, then guards off against standard (CUDA IPC)
set -o pipefail; export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src; nvidia-smi --query-gpu=uuid --format=csv; date
S=b_relu__cuda_module_functions,b_layernorm__cuda_module_pybind_cpp,kb1_88_newgelu__cuda_module_pybind_cpp_float4s,kb2_69_conv_hardswish_relu__cuda_module_pybind_cuda_inplace,b_rmsnorm__cuda_init_local,kb2_29_matmul_mish_mish__cuda_init_try,b2_add_rmsnorm__cuda_lazy_try,kb1_40_layernorm__cuda_two_extensions_lazy,b_leakyrelu__cuda_wrong_slope,b_rmsnorm__triton_autotune,kb2_09_matmul_sub_mul_relu__triton_jit,b2_conv_bn_relu__torch_manual_stats,kb2_57_conv_relu_hardswish__torch_channels_last,kb2_86_matmul_div_gelu__torch_addmm_alpha
R=/tmp/res5; mkdir -p $R
for m in km1 km2; do
  if [ -f /tmp/res4/kb.json ]; then cp /tmp/res4/kb.json $R/$m.json; else cp .whl/kb_s13.json $R/$m.json; fi
  timeout 120 python3 benchmarks/vs_kernelbench.py --device cuda --kernelbench .kb --only $S --skip-kernelbench --resume --out $R/$m.json --markdown $R/$m.md 2>&1 | grep -E "^verify:|Ratio|Verdicts"
  python3 benchmarks/phase_table.py $R/$m.verdicts.jsonl 2>&1 | grep -E "^(build_s|run_wall|guard_|xchg_exit|guard share|timeline)"
  rm -rf $R/$m.work
done
date
timeout 330 python3 benchmarks/guards_cost.py --device cuda --languages cuda,triton,torch --levels off,standard --repeat 2 --json $R/guards.json 2>&1 | grep -v "median phases"
tar czf $OUT/c5.tgz -C $R .
date

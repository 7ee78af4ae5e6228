set -o pipefail; export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src; nvidia-smi -L; date
S=b_relu__cuda_module_functions,b_layernorm__cuda_module_pybind_cpp,kb1_88_newgelu__cuda_module_pybind_cpp_float4s,kb2_69_conv_hardswish_relu__cuda_module_pybind_cuda_inplace,b_rmsnorm__cuda_init_local,kb2_29_matmul_mish_mish__cuda_init_try,b2_add_rmsnorm__cuda_lazy_try,kb1_40_layernorm__cuda_two_extensions_lazy,b_leakyrelu__cuda_wrong_slope,b_rmsnorm__triton_autotune,kb2_09_matmul_sub_mul_relu__triton_jit,b2_conv_bn_relu__torch_manual_stats,kb2_57_conv_relu_hardswish__torch_channels_last,kb2_86_matmul_div_gelu__torch_addmm_alpha
R=/tmp/res6; mkdir -p $R
for m in cold prep; do
  extra=""; [ $m = prep ] && extra="--prepare-headers"
  timeout 150 python3 benchmarks/vs_kernelbench.py --device cuda --kernelbench .kb --only $S --skip-kernelbench --out $R/$m.json --markdown $R/$m.md $extra 2>&1 | grep -E "^verify:|precompiled"
  python3 benchmarks/phase_table.py $R/$m.verdicts.jsonl --gantt 2>&1 | grep -E "^(build_s|timeline)"
  python3 -c "
import json,sys
rows=[json.loads(l) for l in open('$R/$m.verdicts.jsonl')]
print('pch_used by', sum(1 for r in rows if (r['measurement'].get('build') or {}).get('pch_used')), 'of', sum(1 for r in rows if r['phases'].get('build_s',0)>1), 'builds')"
  rm -rf $R/$m.work
done
tar czf $OUT/c6.tgz -C $R .
date

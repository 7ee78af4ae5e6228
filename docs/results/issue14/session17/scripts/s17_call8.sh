# s17 call 8 (after the two fixes: runs keep the user's TORCH_CUDA_ARCH_LIST; binding objects of calls in functions): kernelmill's side again on call 3's KernelBench results,
# the build cache prepared first (`kernelmill prepare-builds` on the samples: headers and binding objects, timed
# apart, a once-per-machine step): the builds of a verification run on a prepared machine
set -o pipefail; export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src; nvidia-smi --query-gpu=uuid,name --format=csv; nproc; date
S=b_relu__cuda_module_functions,b_layernorm__cuda_module_pybind_cpp,kb1_88_newgelu__cuda_module_pybind_cpp_float4s,kb2_69_conv_hardswish_relu__cuda_module_pybind_cuda_inplace,b_rmsnorm__cuda_init_local,kb2_29_matmul_mish_mish__cuda_init_try,b2_add_rmsnorm__cuda_lazy_try,kb1_40_layernorm__cuda_two_extensions_lazy,b_leakyrelu__cuda_wrong_slope,b_rmsnorm__triton_autotune,kb2_09_matmul_sub_mul_relu__triton_jit,b2_conv_bn_relu__torch_manual_stats,kb2_57_conv_relu_hardswish__torch_channels_last,kb2_86_matmul_div_gelu__torch_addmm_alpha
R=$OUT
if [ -f /tmp/res_s17/kb.json ]; then echo "kb.json: this machine's (call 3)"; cp /tmp/res_s17/kb.json $R/kmq.json; else echo "kb.json: from the tree (another machine)"; cp docs/results/issue14/session17/c3/kb.json $R/kmq.json; fi
timeout 400 python3 benchmarks/vs_kernelbench.py --device cuda --kernelbench .kb --only $S --skip-kernelbench --resume --prepare-headers --out $R/kmq.json --markdown $R/kmq.md 2>&1 | grep -E "^verify:|Ratio|Verdicts|prepared"
python3 benchmarks/phase_table.py $R/kmq.verdicts.jsonl 2>&1 | tee $R/phase_table_prepared_fixed.txt | grep -E "^(build_s|run_wall|guard share|timeline)"
python3 -c "
import json
for l in open('$R/kmq.verdicts.jsonl'):
    v=json.loads(l); b=(v.get('measurement') or {}).get('build') or {}
    print(v['sample_id'][:50], v['status'], b.get('compile_s'), b.get('slim'), b.get('compiled'), b.get('reused'))
"
rm -rf $R/kmq.work; date

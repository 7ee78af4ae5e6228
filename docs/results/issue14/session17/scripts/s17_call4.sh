# s17 call 4 (right after call 3, the same machine if still warm; else call 3's kb.json from the tree):
# kernelmill's side on KernelBench's results (cold build cache, guards standard), then the GPU suite, then
# the serve latency
set -o pipefail; export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src; nvidia-smi --query-gpu=uuid,name --format=csv; nproc; date
S=b_relu__cuda_module_functions,b_layernorm__cuda_module_pybind_cpp,kb1_88_newgelu__cuda_module_pybind_cpp_float4s,kb2_69_conv_hardswish_relu__cuda_module_pybind_cuda_inplace,b_rmsnorm__cuda_init_local,kb2_29_matmul_mish_mish__cuda_init_try,b2_add_rmsnorm__cuda_lazy_try,kb1_40_layernorm__cuda_two_extensions_lazy,b_leakyrelu__cuda_wrong_slope,b_rmsnorm__triton_autotune,kb2_09_matmul_sub_mul_relu__triton_jit,b2_conv_bn_relu__torch_manual_stats,kb2_57_conv_relu_hardswish__torch_channels_last,kb2_86_matmul_div_gelu__torch_addmm_alpha
R=$OUT
if [ -f /tmp/res_s17/kb.json ]; then echo "kb.json: this machine's (call 3)"; cp /tmp/res_s17/kb.json $R/km.json; else echo "kb.json: from the tree (another machine)"; cp docs/results/issue14/session17/c3/kb.json $R/km.json; fi
timeout 150 python3 benchmarks/vs_kernelbench.py --device cuda --kernelbench .kb --only $S --skip-kernelbench --resume --out $R/km.json --markdown $R/km.md 2>&1 | grep -E "^verify:|Ratio|Verdicts"
python3 benchmarks/phase_table.py $R/km.verdicts.jsonl 2>&1 | tee $R/phase_table.txt | grep -E "^(build_s|run_wall|guard_|xchg_exit|guard share|timeline)"
rm -rf $R/km.work; date
KM_GPU_PART=hostile timeout 260 python3 -m pytest -q -m gpu -p no:cacheprovider tests/guards/test_gpu_corpus.py tests/verify/test_cuda_ipc.py \
  tests/verify/test_zygote.py tests/verify/test_devices.py 2>&1 | tail -8 | tee $R/gpu_suite.txt
date
timeout 120 python3 benchmarks/serve_latency.py --device cuda --requests 12 --modes long-lived --json $R/serve.json 2>&1 | tail -6
date

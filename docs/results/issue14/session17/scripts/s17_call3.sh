# s17 call 3: KernelBench's harness (eval_kernel_against_ref, batch-style: a compile pool, then one evaluation
# process per candidate, 5 correctness and 100 timing trials) on the fourteen candidates of sessions 9-13
set -o pipefail; export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src:/tmp/site; nvidia-smi --query-gpu=uuid,name --format=csv; nproc; date
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/kb/*.whl 2>&1 | grep -v WARN | tail -2
S=b_relu__cuda_module_functions,b_layernorm__cuda_module_pybind_cpp,kb1_88_newgelu__cuda_module_pybind_cpp_float4s,kb2_69_conv_hardswish_relu__cuda_module_pybind_cuda_inplace,b_rmsnorm__cuda_init_local,kb2_29_matmul_mish_mish__cuda_init_try,b2_add_rmsnorm__cuda_lazy_try,kb1_40_layernorm__cuda_two_extensions_lazy,b_leakyrelu__cuda_wrong_slope,b_rmsnorm__triton_autotune,kb2_09_matmul_sub_mul_relu__triton_jit,b2_conv_bn_relu__torch_manual_stats,kb2_57_conv_relu_hardswish__torch_channels_last,kb2_86_matmul_div_gelu__torch_addmm_alpha
mkdir -p /tmp/res_s17
timeout 570 python3 benchmarks/vs_kernelbench.py --device cuda --kernelbench .kb --only $S --skip-kernelmill --out /tmp/res_s17/kb.json 2>&1 | grep -vE "^\s*$" | tail -25
cp /tmp/res_s17/kb.json $OUT/kb.json; date

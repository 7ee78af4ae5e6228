set -o pipefail; export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src:/tmp/site; nvidia-smi -L; nproc; date
S=b_relu__cuda_module_functions,b_layernorm__cuda_module_pybind_cpp,kb1_88_newgelu__cuda_module_pybind_cpp_float4s,kb2_69_conv_hardswish_relu__cuda_module_pybind_cuda_inplace,b_rmsnorm__cuda_init_local,kb2_29_matmul_mish_mish__cuda_init_try,b2_add_rmsnorm__cuda_lazy_try,kb1_40_layernorm__cuda_two_extensions_lazy,b_leakyrelu__cuda_wrong_slope,b_rmsnorm__triton_autotune,kb2_09_matmul_sub_mul_relu__triton_jit,b2_conv_bn_relu__torch_manual_stats,kb2_57_conv_relu_hardswish__torch_channels_last,kb2_86_matmul_div_gelu__torch_addmm_alpha
python3 -c "import torch, triton; torch.zeros(1).cuda(); print('warm', torch.__version__)"
run() {  # label extra-args...
  m=$1; shift
  cp .whl/kb13.json $OUT/$m.json
  vmstat 1 > $OUT/vmstat_$m.log & V=$!
  timeout 150 python3 benchmarks/vs_kernelbench.py --device cuda --kernelbench .kb --only $S --skip-kernelbench --resume "$@" --out $OUT/$m.json --markdown $OUT/$m.md 2>&1 | grep -E "kernelmill verify|Verdicts"
  kill $V
  python3 benchmarks/phase_table.py $OUT/$m.verdicts.jsonl --gantt 2>&1 | grep -E "^(build_s|run_wall|spare_warm|spare_wait|guard share|timeline|[a-z0-9_]+__)"
  python3 - $OUT/$m.verdicts.jsonl <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print({k: sum(1 for r in rows if r["phases"].get(k)) for k in ("spare_forked", "cand_forked", "build_spare_forked")})
PY
  awk 'NR>2{n++; us+=$13; sy+=$14; id+=$15; if ($15<10) sat++} END{printf "vmstat: %d s, cpu us %.0f%% sy %.0f%% idle %.0f%%, seconds with idle<10%%: %d\n", n, us/n, sy/n, id/n, sat}' $OUT/vmstat_$m.log
  rm -rf $OUT/*.work $OUT/vmstat_$m.log
}
run forkall
run fresh --kernelmill-arg=--no-fork-workers
timeout 200 python3 -m pytest -q -m gpu tests/verify/test_zygote.py 2>&1 | grep -E "^E |passed|failed" | head -20
date

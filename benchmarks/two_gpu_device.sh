#!/usr/bin/env bash
# The two-GPU runs (issues 18, 19, 20) on one machine with two GPUs, one part per device call:
#
#   OUT=/tmp/o bash benchmarks/two_gpu_device.sh scaling   # 18: verification, 1 GPU then 2, same corpus
#   OUT=/tmp/o bash benchmarks/two_gpu_device.sh zero3     # 20: SFT under ZeRO-3, 2 processes (test + tokens/s)
#   OUT=/tmp/o bash benchmarks/two_gpu_device.sh grpo      # 19: multi-turn GRPO, verifier on its own GPU vs shared
#
# Run from the repository root. Python packages the image lacks come as wheels: WHEELS=DIR (each
# *.whl in it goes to /tmp/site, which then leads PYTHONPATH); a warm machine keeps /tmp/site
# between calls, so wheels too large for one call travel in two (pyarrow alone, then the rest).
# zero3 and grpo need trl, datasets (pyarrow >= 24, dill, multiprocess, fsspec); zero3 also
# deepspeed (a wheel built with DS_BUILD_OPS=0), hjson and pydantic. Logs and JSON go to $OUT.
set -uo pipefail
PART=${1:?part: scaling, zero3 or grpo}
OUT=${OUT:?set OUT to the results folder}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false HF_HUB_OFFLINE=1
if [ -n "${WHEELS:-}" ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
      "$WHEELS"/*.whl 2>&1 | grep -v "^WARNING" | tail -3
fi
[ -d /tmp/site ] && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
export PYTHONPATH=$PWD/src${PYTHONPATH:+:$PYTHONPATH}
nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader
python3 - <<'EOF'
from importlib.metadata import version, PackageNotFoundError
def v(n):
    try: return version(n)
    except PackageNotFoundError: return None
import torch
print({"torch": torch.__version__, "gpus": torch.cuda.device_count(),
       **{n: v(n) for n in ("transformers", "trl", "accelerate", "peft", "datasets", "pyarrow", "deepspeed", "triton")}})
EOF

smi() {  # GPU utilisation and memory of both GPUs every 500 ms while a part runs
  nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used --format=csv,noheader,nounits -lms 500 \
      > "$OUT/smi_$1.csv" 2>/dev/null &
  SMI=$!
}
T0=$SECONDS
case "$PART" in
  scaling)
    smi scaling
    python3 benchmarks/verify_throughput.py --language cuda,triton,torch --copies ${KM_COPIES:-1} \
        --scaling 1,2 --out "$OUT/verify_scaling.json" > "$OUT/scaling.log" 2>&1
    rc=$?
    kill $SMI
    grep -E "^== |unexpected|per_minute" "$OUT/scaling.log" | head -20
    tail -6 "$OUT/scaling.log"
    ;;
  zero3)
    KM_TWO_PROCESS_LAUNCH=configs/accelerate_zero3.yaml timeout ${KM_TEST_S:-300} python3 -m pytest -q \
        -p no:cacheprovider tests/train/test_two_process_sft.py > "$OUT/zero3_test.log" 2>&1
    rc=$?
    tail -25 "$OUT/zero3_test.log"
    smi zero3
    timeout ${KM_BENCH_S:-240} python3 benchmarks/train_two_process.py --device cuda \
        --launch-config configs/accelerate_zero3.yaml --hidden 512 --layers 4 --seq 512 --batch 4 --steps 20 \
        --repeats ${KM_REPEATS:-2} --out "$OUT/two_process.json" > "$OUT/two_process.log" 2>&1
    rc=$(( rc || $? ))
    kill $SMI
    grep -E "^\{|tokens/s" "$OUT/two_process.log" | cut -c1-400 | tail -8
    ;;
  grpo)
    smi grpo
    timeout ${KM_GRPO_S:-460} python3 benchmarks/grpo_verifier_gpu.py --device cuda --via serve --mode both \
        --max-seconds ${KM_GRPO_BUDGET:-380} --out "$OUT/grpo_two_gpu.json" > "$OUT/grpo.log" 2>&1
    rc=$?
    kill $SMI
    tail -30 "$OUT/grpo.log"
    ;;
  *) echo "unknown part $PART"; exit 2 ;;
esac
echo "part $PART: exit $rc after $((SECONDS - T0)) s"
exit $rc

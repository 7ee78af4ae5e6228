# s13 call 7: guards off (inputs drawn on the device, as the guarded run draws them) against standard (CUDA IPC)
set -o pipefail; export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src; nvidia-smi --query-gpu=uuid --format=csv; nproc; date
R=/tmp/res7; mkdir -p $R
timeout 420 python3 benchmarks/guards_cost.py --device cuda --languages cuda,triton,torch --levels off,standard --repeat 2 --json $R/guards.json 2>&1 | grep -v "median phases"
tar czf $OUT/c7.tgz -C $R .
date

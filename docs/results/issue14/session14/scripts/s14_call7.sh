# s14 call 7 (same machine as 5-6): guards off against standard, three more interleaved pairs (final code)
set -o pipefail; export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src; nvidia-smi --query-gpu=uuid,name --format=csv; date
R=/tmp/res7; mkdir -p $R
timeout 330 python3 benchmarks/guards_cost.py --device cuda --languages cuda,triton,torch --levels off,standard --repeat 3 --json $R/guards.json 2>&1 | grep -v "median phases"
tar czf $OUT/c7.tgz -C $R .
date

# s15 call 5: guards off against standard at this session's code (25 correct builtin candidates, levels interleaved, twice)
set -o pipefail; export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src; nvidia-smi --query-gpu=uuid,name --format=csv; nproc; date
R=/tmp/res5; mkdir -p $R
timeout 240 python3 benchmarks/guards_cost.py --device cuda --languages cuda,triton,torch --levels off,standard --repeat 2 --json $R/guards.json 2>&1 | grep -v "median phases" | tail -12
tar czf $OUT/c5.tgz -C $R .
date

# s14 call 2: the supervisor's first draw and reference work per builtin task (fresh forked processes),
# with and without the spare warming the drawing kernels; guards off/standard, new code then the session's start (cmp_old = c62909d)
set -o pipefail; export PYTHONUNBUFFERED=1; nvidia-smi --query-gpu=uuid,name --format=csv; nproc; date
R=/tmp/res2; mkdir -p $R
export PYTHONPATH=$PWD/src
timeout 100 python3 benchmarks/diag/reference_side.py --out $R/ref_side.json 2>&1 | tail -2
timeout 100 python3 benchmarks/diag/reference_side.py --warm-draws --out $R/ref_side_warm.json 2>&1 | tail -2
date
timeout 170 python3 benchmarks/guards_cost.py --device cuda --languages cuda,triton,torch --levels off,standard --json $R/guards_new.json 2>&1 | grep -v "median phases"
date
PYTHONPATH=$PWD/cmp_old/src timeout 170 python3 benchmarks/guards_cost.py --device cuda --languages cuda,triton,torch --levels off,standard --json $R/guards_old.json 2>&1 | grep -v "median phases"
tar czf $OUT/c2.tgz -C $R .
date

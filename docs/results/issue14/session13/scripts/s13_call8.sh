# s13 call 8: builtin throughput with 2 and 3 runs per GPU (spares are cheaper now)
set -o pipefail; export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src; nvidia-smi --query-gpu=uuid --format=csv; nproc; date
R=/tmp/res8; mkdir -p $R
timeout 300 python3 benchmarks/verify_throughput.py --language cuda,triton,torch --copies 1 --runs-sweep 2,3,2 --out $R/tp_sweep.json 2>&1 | tail -8
tar czf $OUT/c8.tgz -C $R .
date

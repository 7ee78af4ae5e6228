# s14 call 3: builtin throughput (cuda, triton, torch; 2 copies = 66 candidates per pass), new code with 2, 3, 2 runs per GPU,
# then the session's start (cmp_old = c62909d, same benchmark script) with 2; GPU lock holders and nvidia-smi sampled beside each pass
set -o pipefail; export PYTHONUNBUFFERED=1; nvidia-smi --query-gpu=uuid,name --format=csv; nproc; date
R=/tmp/res3; mkdir -p $R
timeout 390 python3 benchmarks/verify_throughput.py --language cuda,triton,torch --copies 2 --runs-sweep 2,3,2 --lock-share --cache-dir /tmp/kmc --out $R/tp_new.json 2>&1 | tail -7
date
timeout 170 python3 cmp_old/benchmarks/verify_throughput.py --language cuda,triton,torch --copies 2 --lock-share --cache-dir /tmp/kmc --out $R/tp_old.json 2>&1 | grep -A12 '"steady"' | head -30
tar czf $OUT/c3.tgz -C $R .
date

# s14 call 4: where a run's wall goes beyond its phases (run_head_s, sup_setup_s, sup_close_s, run_tail_s), builtin throughput, 2 runs per GPU
set -o pipefail; export PYTHONUNBUFFERED=1; nvidia-smi --query-gpu=uuid,name --format=csv; nproc; date
R=/tmp/res4; mkdir -p $R
timeout 300 python3 benchmarks/verify_throughput.py --language cuda,triton,torch --copies 2 --runs-sweep 2,2 --lock-share --cache-dir /tmp/kmc --out $R/tp.json 2>&1 | tail -5
python3 -c "
import json; d=json.load(open('$R/tp.json'))
for r in d['runs']: print(r['steady'], json.dumps(r['phase_medians']))"
tar czf $OUT/c4.tgz -C $R .
date

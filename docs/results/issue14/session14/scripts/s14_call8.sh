# s14 call 8: builtin throughput (66 candidates a pass, 2 runs per GPU): this code (the check kernels warmed in the candidate's process)
# twice, then the code of calls 5-7 (e729024, cmp_old, same benchmark script) once; GPU lock and nvidia-smi sampled beside each pass
set -o pipefail; export PYTHONUNBUFFERED=1; nvidia-smi --query-gpu=uuid,name --format=csv; nproc; date
R=/tmp/res8; mkdir -p $R
timeout 330 python3 benchmarks/verify_throughput.py --language cuda,triton,torch --copies 2 --runs-sweep 2,2 --lock-share --cache-dir /tmp/kmc --out $R/tp_new.json 2>&1 | tail -5
date
timeout 200 python3 cmp_old/benchmarks/verify_throughput.py --language cuda,triton,torch --copies 2 --lock-share --cache-dir /tmp/kmc --out $R/tp_old.json 2>&1 | grep -A3 '"steady"'
python3 -c "
import json
for f in ('tp_new', 'tp_old'):
    d = json.load(open('$R/' + f + '.json'))
    for r in d.get('runs', [d]): print(f, r['steady'], r.get('lock_share', {}).get('0', {}).get('steady'), json.dumps(r['phase_medians']))"
tar czf $OUT/c8.tgz -C $R .
date

# s14 call 5: builtin throughput (66 candidates a pass, 2 runs per GPU): this code (run slot free at the result, Triton imported ahead)
# twice, then the code of call 4 (ff3f839, cmp_old, same benchmark script) once; GPU lock and nvidia-smi sampled beside each pass
set -o pipefail; export PYTHONUNBUFFERED=1; nvidia-smi --query-gpu=uuid,name --format=csv; nproc; date
R=/tmp/res5; mkdir -p $R
timeout 330 python3 benchmarks/verify_throughput.py --language cuda,triton,torch --copies 2 --runs-sweep 2,2 --lock-share --cache-dir /tmp/kmc --out $R/tp_new.json 2>&1 | tail -5
date
timeout 200 python3 cmp_old/benchmarks/verify_throughput.py --language cuda,triton,torch --copies 2 --lock-share --cache-dir /tmp/kmc --out $R/tp_old.json 2>&1 | grep -A3 '"steady"'
python3 -c "
import json
for f in ('tp_new', 'tp_old'):
    d = json.load(open('$R/' + f + '.json'))
    for r in d.get('runs', [d]): print(f, r['steady'], r.get('lock_share', {}).get('0', {}).get('steady'), json.dumps(r['phase_medians']))"
tar czf $OUT/c5.tgz -C $R .
date

# s15 call 2: where a context's time goes (diag/warm_sections.py); builtin throughput, 66 candidates a pass, 2 runs/GPU:
# this code (contexts opened one at a time, cuInit outside the lock) / call 1's code (cmp_old, same benchmark scripts) / this code
set -o pipefail; export PYTHONUNBUFFERED=1; nvidia-smi --query-gpu=uuid,name --format=csv; nproc; date
R=/tmp/res2; mkdir -p $R
timeout 150 python3 benchmarks/diag/warm_sections.py --processes 3 --parallel 4 --out $R/warm_sections.json 2>&1 | tail -60
date
for k in new1:benchmarks old:cmp_old/benchmarks new2:benchmarks; do
  n=${k%%:*}; b=${k#*:}
  timeout 200 python3 $b/verify_throughput.py --language cuda,triton,torch --copies 2 --lock-share --cache-dir /tmp/kmc --out $R/tp_$n.json 2>&1 | tail -2
  date
done
python3 -c "
import json
for f in ('tp_new1', 'tp_old', 'tp_new2'):
    d = json.load(open('$R/' + f + '.json'))
    for r in d['runs']:
        e = r.get('lock_events', {}).get('0', {})
        print(f, r['steady'], r.get('lock_share', {}).get('0', {}).get('steady'))
        print('   cover', e.get('cover'), 'waits', e.get('timing_waits_s'))
        print('   holds', {k: (v['median_hold_s'], v['held_s']) for k, v in e.get('held', {}).items()})"
tar czf $OUT/c2.tgz -C $R .
date

# s15 call 3: builtin throughput, 66 candidates a pass, 2 runs/GPU, lock sampled and its holds logged:
# contexts one at a time (this code, CTX_LANES=1) / two at a time (cmp_l2: the same with CTX_LANES=2) /
# no turns (cmp_old: call 1's code) / one at a time again. A first pass of this code builds the cache.
set -o pipefail; export PYTHONUNBUFFERED=1; nvidia-smi --query-gpu=uuid,name --format=csv; nproc; date
R=/tmp/res3; mkdir -p $R
for k in l1a:benchmarks l2:cmp_l2/benchmarks old:cmp_old/benchmarks l1b:benchmarks; do
  n=${k%%:*}; b=${k#*:}
  timeout 170 python3 $b/verify_throughput.py --language cuda,triton,torch --copies 2 --lock-share --cache-dir /tmp/kmc --out $R/tp_$n.json 2>&1 | tail -1
  date
done
python3 -c "
import json
for f in ('l1a', 'l2', 'old', 'l1b'):
    r = json.load(open('$R/tp_' + f + '.json'))
    e = r.get('lock_events', {}).get('0', {})
    print(f, r['per_minute'], r['steady'], r.get('lock_share', {}).get('0', {}).get('steady'), r['unexpected_verdicts'])
    print('   waits', e.get('timing_waits_s'))"
tar czf $OUT/c3.tgz -C $R .
date

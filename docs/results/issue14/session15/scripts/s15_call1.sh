# s15 call 1: warm-up sections on a quiet GPU; builtin throughput (66 candidates a pass, 2 runs per GPU, two passes)
# with the GPU lock sampled from /proc/locks and the harness's own labelled log of its holds (diag/lock_events.py)
set -o pipefail; export PYTHONUNBUFFERED=1; nvidia-smi --query-gpu=uuid,name --format=csv; nproc; date
R=/tmp/res1; mkdir -p $R
timeout 90 python3 benchmarks/diag/warm_sections.py --processes 5 --out $R/warm_sections.json 2>&1 | tail -30
date
timeout 330 python3 benchmarks/verify_throughput.py --language cuda,triton,torch --copies 2 --runs-sweep 2,2 --lock-share --cache-dir /tmp/kmc --out $R/tp.json 2>&1 | tail -4
python3 -c "
import json
d = json.load(open('$R/tp.json'))
for r in d['runs']: print(r['steady'], r.get('lock_share', {}).get('0', {}).get('steady')); print(json.dumps(r.get('lock_events'), indent=1))"
tar czf $OUT/c1.tgz -C $R .
date

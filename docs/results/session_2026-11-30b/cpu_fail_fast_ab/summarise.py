# Summarises /tmp/ffab/v_*.jsonl (ab.sh's verdicts; copies of their build facts are beside this file).
import json,statistics,sys,glob
for f in sorted(glob.glob('/tmp/ffab/v_*.jsonl')):
    V=[json.loads(l) for l in open(f)]
    rows=[]
    for v in V:
        b=(v.get('measurement') or {}).get('build') or {}; ph=v.get('phases') or {}
        if 'build_wall_s' not in ph: continue
        rows.append((v['sample_id'][7:], ph['build_wall_s'], b.get('fail_fast'), b.get('compile_s'), b.get('check_s'), b.get('idents_s'), bool(b.get('failed') or b.get('fail_fast'))))
    fail=[r for r in rows if r[6]]
    ok=[r for r in rows if not r[6]]
    print(f, 'n', len(rows), 'failing', len(fail), 'median build_wall', round(statistics.median(r[1] for r in fail),2), 'max', round(max(r[1] for r in fail),2), '| successful', [round(r[1],1) for r in ok])
    if '-v' in sys.argv:
        for r in sorted(fail, key=lambda r: r[1]): print('   ', r[:6])

# s17 call 7: call 6 again with the fix (a run keeps the user's TORCH_CUDA_ARCH_LIST, as prepare-builds does): prepare, run
# kernelmill on four CUDA candidates in that cache, then list what each header and object's key was made of
# (the manifests' meta, new in this session)
set -o pipefail; export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src; nvidia-smi --query-gpu=uuid,name --format=csv; date
S=b_relu__cuda_module_functions,b_layernorm__cuda_module_pybind_cpp,b_rmsnorm__cuda_init_local,kb1_88_newgelu__cuda_module_pybind_cpp_float4s
timeout 300 python3 benchmarks/vs_kernelbench.py --device cuda --kernelbench .kb --only $S --skip-kernelbench --prepare-headers \
  --work /tmp/d7 --out $OUT/d7.json 2>&1 | grep -E "^verify:|prepared|Error|error" | head
python3 - <<'PY' > $OUT/manifests.jsonl
import json, glob, os
for kind in ("pch", "obj"):
    for m in sorted(glob.glob(f"/tmp/d7/km_cache/build/{kind}/*/*/manifest.json"), key=os.path.getmtime):
        d = json.load(open(m)); meta = d.get("meta") or {}
        if kind == "obj" and meta.get("kind") not in ("sigbind", "slim"):
            continue
        print(json.dumps({"kind": kind, "created": d.get("created"), **meta}))
PY
wc -l $OUT/manifests.jsonl; python3 - <<'PY'
import json, os
rows = [json.loads(l) for l in open(os.environ["OUT"] + "/manifests.jsonl")]
envs = sorted({r.get("env", "") for r in rows}); print("distinct env ids:", len(envs))
for e in envs: print("  ", repr(e))
for r in rows: print(r["kind"], r.get("kind"), r.get("env", "")[-40:], " ".join(r.get("flags") or r.get("command") or [])[-300:])
PY
date
python3 -c "
import json
for l in open('$OUT/d7.verdicts.jsonl'):
    v=json.loads(l); print(v['sample_id'][:45], v['status'], json.dumps((v.get('measurement') or {}).get('build')))
"

#!/usr/bin/env bash
# The TileLang seed corpus on one GPU: every candidates/<level>/<task>/tilelang__ok*.py through
# the normal `kernelmill verify` (guards standard, full-size tasks), after compiling each seed's
# kernels once on their own to time the compiles.
#
#   1. benchmarks/tilelang_seeds_check.py (GPU target, an empty TileLang cache): compile seconds
#      per kernel -> $OUT/compile.jsonl. The cache it fills is the one verify uses
#      ($KERNELMILL_CACHE/tilelang), so the run processes load these kernels instead of compiling;
#      summary.json says how many kernel cache entries verify added (0 when the keys matched).
#   2. kernelmill verify builtin seeds.jsonl --device cuda -> $OUT/verdicts.jsonl
#   3. benchmarks/tilelang_seeds_summary.py -> $OUT/summary.json, $OUT/summary.md
#      (status, speedup, times and compile seconds per task)
#
# Run from the repository root; `import tilelang` must work and nvcc be on PATH.
#   OUT=/tmp/o bash benchmarks/tilelang_seeds_device.sh
# The seeds can be split into parts, each run as its own command (the same split in both steps):
#   KM_PARTS=3 KM_PART=1 OUT=/tmp/o1 bash benchmarks/tilelang_seeds_device.sh   (then KM_PART=2, 3)
# which is what an H100 needs (a guarded run of a full-size task is 5-12 s: about 14 seeds fit).
# Or name the seeds' task ids (comma-separated; both steps take only those, within the part):
#   KM_TASKS=level1/13_TransposedMatmul,level1/23_GroupNorm OUT=/tmp/o bash benchmarks/tilelang_seeds_device.sh
# (benchmarks/tilelang_seeds_rest_device.sh names the seeds the first H100 run left out).
# KM_COMPILE_TIMEOUT and KM_VERIFY_TIMEOUT (seconds, default 180 and 300) bound the two steps.
# At most about 8.5 minutes on an H100: compiling is cut at 180 s, verify at 300 s (timeout exits
# 124); the summary is written either way. Running the same command again (same machine, same
# KM_WORK) resumes: the verify store answers finished seeds, the TileLang cache holds the kernels
# (so compile.jsonl then shows cache loads, not cold compiles).
# Exit status: that of verify.
set -uo pipefail

OUT=${OUT:?set OUT to the results folder}
PY=${PYTHON:-python3}
PARTS=${KM_PARTS:-1}
PART=${KM_PART:-1}
TASKS=${KM_TASKS:-}  # comma-separated task ids; empty: every seed of the part
WORK=${KM_WORK:-/tmp/km-tlseeds}  # kept: a second run resumes (verify store, TileLang cache)
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
export KERNELMILL_CACHE="$WORK/cache"
export TILELANG_CACHE_DIR="$KERNELMILL_CACHE/tilelang"   # what verify's backend gives its processes
export TILELANG_PRINT_ON_COMPILATION=0
mkdir -p "$OUT" "$TILELANG_CACHE_DIR" "$WORK"
exec > >(tee -a "$OUT/seeds.log") 2>&1
T0=$SECONDS
step() { echo; echo "=== [$((SECONDS - T0)) s] $*"; }
entries() { find "$TILELANG_CACHE_DIR" -name kernel_lib.so 2>/dev/null | wc -l; }

step "environment"
"$PY" -c 'import torch, tilelang; print("torch", torch.__version__, "cuda", torch.version.cuda, "tilelang", tilelang.__version__, torch.cuda.get_device_name(0))'
which nvcc && nvcc --version | tail -1

step "compile every seed kernel once (cold cache), timed"
timeout "${KM_COMPILE_TIMEOUT:-180}" "$PY" benchmarks/tilelang_seeds_check.py --part "$PART/$PARTS" --tasks "$TASKS" \
    --out "$OUT/compile.jsonl"
echo "check exit: $?"
BEFORE=$(entries)
echo "kernel cache entries: $BEFORE"

step "samples"
"$PY" - "$WORK/seeds.jsonl" "$PART" "$PARTS" "$TASKS" <<'PYEOF' || { echo "error: no samples file"; exit 2; }
import json, sys
from kernelmill.tasks.builtin import builtin_samples
# the same order and split as tilelang_seeds_check.py --part (sorted by file path)
seeds = sorted((s for s in builtin_samples(["tilelang"]) if s.meta["expect"] == "ok"), key=lambda s: s.meta["path"])
k, n = int(sys.argv[2]), int(sys.argv[3])
rows = [s for i, s in enumerate(seeds) if i % n == k - 1]
wanted = {t.strip() for t in sys.argv[4].split(",") if t.strip()}
if wanted:
    unknown = wanted - {s.task_id for s in seeds}
    if unknown:
        sys.exit(f"KM_TASKS names tasks without a TileLang seed: {sorted(unknown)}")
    rows = [s for s in rows if s.task_id in wanted]
with open(sys.argv[1], "w") as fh:
    for s in rows:
        fh.write(json.dumps({"sample_id": s.sample_id, "task_id": s.task_id, "language": s.language,
                             "code": s.code, "model": "seed", "meta": s.meta}) + "\n")
print(len(rows), "seed candidates")
PYEOF

step "kernelmill verify (guards standard, full profile)"
timeout "${KM_VERIFY_TIMEOUT:-300}" "$PY" -m kernelmill.cli verify builtin "$WORK/seeds.jsonl" -o "$OUT/verdicts.jsonl" \
    --device cuda --profile full --guards standard --run-timeout 240
RC=$?
echo "verify exit: $RC"
AFTER=$(entries)

step "summary"
"$PY" benchmarks/tilelang_seeds_summary.py --verdicts "$OUT/verdicts.jsonl" --compile "$OUT/compile.jsonl" \
    --samples "$WORK/seeds.jsonl" --cache-before "$BEFORE" --cache-after "$AFTER" --out "$OUT"
echo "done in $((SECONDS - T0)) s; work folder $WORK"
exit $RC

#!/usr/bin/env bash
# The decompilation evaluator on the device (issue 16 item 2), from this repo alone:
#   207 evaluation pairs (benchmarks/ptx_eval_pairs.py: parametrised kernels with stored configs)
#   1. the reference CUDA as its own candidate     -> every metric perfect (100%, CodeBLEU 1.0, deviations ~0)
#   2. a perturbed copy (every output store changed) -> I/O errors found (I/O correctness 0%)
#   3. a decompiled set: pairs -> `generate -t ptx2cuda` against the fake server with scripted answers
#      (right, right with another schedule, wrong, not compiling, faulting, hanging, no code)
#   ncu (global-load efficiency) on the first I/O-correct candidates of runs 1 and 3.
# Writes to $OUT (6 files): summary.json (the three runs), figures.png (rates, CodeBLEU, both KDEs),
# results_{reference,perturbed,decompiled}.jsonl, log.txt.   About 5-7 min on an H100.
#
#   export PYTHONPATH=$PWD/src; OUT=/some/dir bash benchmarks/ptx_evaluate_device.sh
set -uo pipefail
: "${OUT:?set OUT to the output folder}"
export PYTHONPATH="${PYTHONPATH:-$PWD/src}"
mkdir -p "$OUT"
LOG="$OUT/log.txt"
W="$(mktemp -d /tmp/km-ptx-eval.XXXXXX)"
KM=(python -m kernelmill.cli)
NCU_LIMIT="${NCU_LIMIT:-16}"
DEVICE="${DEVICE:-cuda}"            # DEVICE=cpu LIMIT=12: a dry run of every step on a CPU machine
LIMIT=(${LIMIT:+--limit "$LIMIT"})
t0=$(date +%s)
step() { echo "== [$(( $(date +%s) - t0 )) s] $*" | tee -a "$LOG"; }

step "environment"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -2;
  python -c "import torch; print('torch', torch.__version__, torch.version.cuda)";
  command -v ncu && ncu --version | tail -1; } >>"$LOG" 2>&1
if command -v ncu >/dev/null; then
  ncu --query-metrics 2>/dev/null | grep -E "sass_average_data_bytes_per_sector_mem_global|sass_data_bytes_mem_global_op_ld" \
    >>"$LOG" 2>&1 || echo "ncu --query-metrics: metric names not listed" >>"$LOG"
fi

step "pairs + scripted answers"
python benchmarks/ptx_eval_pairs.py -o "$W/pairs.jsonl" --answers "$W/answers.jsonl" --jobs 16 "${LIMIT[@]}" 2>&1 | tee -a "$LOG" || exit 1

step "candidate sets"
"${KM[@]}" ptx candidates "$W/pairs.jsonl" -o "$W/reference.jsonl" --as reference 2>&1 | tee -a "$LOG"
"${KM[@]}" ptx candidates "$W/pairs.jsonl" -o "$W/perturbed.jsonl" --as perturbed 2>&1 | tee -a "$LOG"

step "fake server + generate (ptx2cuda)"
python -m kernelmill.generate.fake_server --port 0 --answers "$W/answers.jsonl" --pairs "$W/pairs.jsonl" \
  >"$W/server.txt" 2>&1 &
SERVER=$!
for _ in $(seq 100); do grep -q http "$W/server.txt" 2>/dev/null && break; sleep 0.1; done
URL="$(grep -m1 http "$W/server.txt")"
"${KM[@]}" generate "$W/pairs.jsonl" -t ptx2cuda -o "$W/decompiled.jsonl" -n 1 --model fake-model \
  --base-url "$URL" --temperature 0 --no-progress 2>&1 | tail -2 | tee -a "$LOG"
kill "$SERVER" 2>/dev/null; wait "$SERVER" 2>/dev/null

B="$W/build"   # one nvcc cache: each reference is compiled once for all three runs
run() {  # name samples [extra args]
  local name=$1 samples=$2; shift 2
  step "evaluate $name"
  "${KM[@]}" ptx evaluate "$W/pairs.jsonl" "$samples" -o "$W/ev_$name" --build-dir "$B" --device "$DEVICE" \
    --workers 8 --batch 24 "$@" \
    2>"$W/ev_$name.progress" | tee -a "$LOG"
  grep -E ": (runtime_error|timeout|reference_failed|no_configuration)" "$W/ev_$name.progress" | head -12 >>"$LOG"
  tail -3 "$W/ev_$name.progress" >>"$LOG"
  cp "$W/ev_$name/results.jsonl" "$OUT/results_$name.jsonl" 2>/dev/null
}
run reference "$W/reference.jsonl" --ncu --ncu-limit "$NCU_LIMIT"
run perturbed "$W/perturbed.jsonl" --no-timing
run decompiled "$W/decompiled.jsonl" --timeout 20 --ncu --ncu-limit "$NCU_LIMIT"

step "figures"
"${KM[@]}" ptx eval-plot "reference=$W/ev_reference" "perturbed=$W/ev_perturbed" "decompiled=$W/ev_decompiled" \
  -o "$OUT/figures.png" --json "$OUT/summary.json" 2>&1 | tee -a "$LOG"
python - "$W/answers.jsonl" "$OUT/results_decompiled.jsonl" >>"$LOG" 2>&1 <<'PY'
import collections, json, sys
kind = {r["task_id"]: r["kind"] for r in map(json.loads, open(sys.argv[1]))}
tab = collections.Counter((kind.get(r["task_id"]), r["status"]) for r in map(json.loads, open(sys.argv[2])))
print("decompiled: scripted answer kind -> status")
for (k, s), n in sorted(tab.items()):
    print(f"  {k:22s} {s:16s} {n}")
PY
step "done"
rm -rf "$W"

#!/usr/bin/env bash
# The whole TileLang loop (paper 002, docs/tilelang.md) on one GPU with a scripted model:
#
#   scripted answers (right / wrong / not compiling, made from the seed kernels)
#   -> fake OpenAI-compatible server (the "model") and a second one (the trace pool)
#   -> kernelmill bootstrap --dsl tilelang: 2 rounds of 4 over 6 tasks, 2 held-out tasks evaluated
#      after every round (compile rate, correctness rate at rtol 1e-5, pass@5 of 5 samples)
#   -> kernelmill align: traces from the pool, scored by a tiny base model on the GPU (top
#      quartile), injected negatives confirmed by the verifier on the GPU, failed attempts,
#      KTO export at 3:8, GRPO prompts
#   -> kernelmill train kto (tiny model, 3 steps) -> kernelmill train grpo (multi-turn, 2 steps,
#      reward through the verifier) -> the reward of right/wrong/broken completions through the
#      verifier -> checks: the corpus grew by exactly the verified samples, every verdict
#      matches its scripted label, every stage's output exists.
#
# Run from the repository root (PYTHONPATH=$PWD/src is set here); results go to $OUT:
#   loop.log, summary.json, growth.png, eval.png, eval.md, loop_run.tar.gz (the whole work folder).
# Exit status 1 when a check fails (summary.json lists it). About 5-9 minutes on an H100
# (every distinct TileLang kernel is compiled once; the verify store answers repeats).
#
#   KM_DSL=torch KM_DEVICE=cpu OUT=/tmp/o bash benchmarks/tilelang_loop_device.sh   # the CPU twin
#                                                  (tests/dsl/test_loop_script.py runs it)
# Needs: torch, transformers, sentence-transformers, trl, datasets, matplotlib, pyarrow, typer
# (and tilelang for KM_DSL=tilelang); nothing is downloaded (the embedder and the language
# model are built here with random weights).
set -euo pipefail

DSL=${KM_DSL:-tilelang}
DEVICE=${KM_DEVICE:-cuda}
OUT=${OUT:?set OUT to the results folder}
PY=${PYTHON:-python3}
WORK=${KM_WORK:-$(mktemp -d /tmp/km-loop.XXXXXX)}
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
export TOKENIZERS_PARALLELISM=false
mkdir -p "$OUT" "$WORK"
exec > >(tee -a "$OUT/loop.log") 2>&1
KM=("$PY" -m kernelmill.cli)
T0=$SECONDS
step() { echo; echo "=== [$((SECONDS - T0)) s] $*"; }

PIDS=()
cleanup() {
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
  if [ -d "$WORK" ]; then  # everything but model weights and checkpoints, in one file
    tar -czf "$OUT/loop_run.tar.gz" -C "$WORK" --exclude='checkpoint-*' --exclude='*.safetensors' \
        --exclude='embedder' --exclude='*.bin' . 2>/dev/null || true
  fi
  for f in growth.png eval.png eval.md; do
    [ -f "$WORK/run/$f" ] && cp "$WORK/run/$f" "$OUT/$f"
  done
  echo "work folder: $WORK; results in $OUT ($((SECONDS - T0)) s)"
}
trap cleanup EXIT

step "preflight ($DSL on $DEVICE)"
"$PY" benchmarks/dsl_loop.py preflight --dsl "$DSL"

step "scripted answers from the $DSL seed kernels"
PLAN=$("$PY" benchmarks/dsl_loop.py answers --dsl "$DSL" --work "$WORK")
echo "$PLAN"
TASKS=$("$PY" -c 'import json,sys; print(json.loads(sys.argv[1])["tasks"])' "$PLAN")
HELDOUT=$("$PY" -c 'import json,sys; print(json.loads(sys.argv[1])["heldout"])' "$PLAN")

step "tiny embedder (built here, random weights)"
EMB=$("$PY" -m kernelmill.dsl.tiny "$WORK/embedder" 2>/dev/null | tail -1)
echo "$EMB"

start_server() {  # $1 answers file, $2 url file, then the model names it serves
  local answers=$1 url=$2; shift 2
  local names=(); for m in "$@"; do names+=(--model "$m"); done
  "$PY" -m kernelmill.generate.fake_server --port 0 --answers "$answers" --tasks builtin "${names[@]}" > "$url" &
  PIDS+=($!)
  for _ in $(seq 100); do [ -s "$url" ] && break; sleep 0.2; done
  [ -s "$url" ] || { echo "error: the fake server for $answers did not start"; exit 1; }
}
step "fake servers: the model and the trace pool"
start_server "$WORK/answers.jsonl" "$WORK/model.url" fake-model   # not in $(...): the pid must reach PIDS
start_server "$WORK/traces.jsonl" "$WORK/pool.url" pool-a pool-b
MODEL_URL=$(head -1 "$WORK/model.url")
POOL_URL=$(head -1 "$WORK/pool.url")
echo "model $MODEL_URL, pool $POOL_URL"

# TileLang: 2 rounds of 4 tasks (every distinct kernel is compiled on the GPU); torch: 3 rounds of 3
if [ "$DSL" = tilelang ]; then ROUNDS=${KM_ROUNDS:-2}; PER_ROUND=${KM_PER_ROUND:-4}; SEEDS=--no-seeds
else ROUNDS=${KM_ROUNDS:-3}; PER_ROUND=${KM_PER_ROUND:-3}; SEEDS=--seeds; fi
step "kernelmill bootstrap --dsl $DSL ($ROUNDS rounds of $PER_ROUND tasks, held-out evaluation after each)"
"${KM[@]}" bootstrap builtin --dsl "$DSL" --out "$WORK/run" --model fake-model --base-url "$MODEL_URL" \
    --tasks "$TASKS" --heldout "$HELDOUT" --embedder "$EMB" -k 5 -n 1 --per-round "$PER_ROUND" --max-attempts 2 \
    --max-rounds "$ROUNDS" --eval-n 5 --eval-k 5 --eval-rtol 1e-5 --device "$DEVICE" --no-time --max-tokens 4096

step "tiny language model (tokenizer trained on the run's text)"
"$PY" benchmarks/dsl_loop.py tiny-lm --work "$WORK"

step "kernelmill align: traces, scores on the $DEVICE, negatives confirmed by the verifier, KTO and GRPO exports"
SCORE_DEV=$DEVICE
"${KM[@]}" align "$WORK/run" --out "$WORK/align" --pool-model pool-a --pool-model pool-b --base-url "$POOL_URL" \
    --base-model "$WORK/tiny-lm" --score-device "$SCORE_DEV" --device "$DEVICE" --ratio 3:8 --fraction 0.25 \
    --score-max-length 4096 $SEEDS   # TileLang: traces for the loop's kernels only (38 seeds x 2 would take long)

step "kernelmill train kto (tiny model, 3 steps)"
"$PY" benchmarks/dsl_loop.py recipes --work "$WORK" --device "$DEVICE"
"${KM[@]}" train kto --config "$WORK/kto.yaml"

step "kernelmill train grpo on $DSL tasks (multi-turn, 2 steps, reward through the verifier)"
"${KM[@]}" train grpo --config "$WORK/grpo.yaml"

step "the paper's reward through the verifier: right, wrong and broken $DSL completions"
"$PY" benchmarks/dsl_loop.py reward --work "$WORK" --device "$DEVICE"

step "checks"
"$PY" benchmarks/dsl_loop.py check --work "$WORK" --out "$OUT"

#!/usr/bin/env bash
# The README in a fresh clone and a fresh virtual environment (issue 17): clone
# this repository at HEAD into a temp folder, make a venv, run the README's
# first command exactly as written (install + `kernelmill demo`), then the
# first hour's commands (README "The job" lines that need no placeholder, the
# dry run fake server -> generate -> verify -> export -> train tiny as written,
# then metrics/report/show on the dry run's files), timing each; a table at
# the end (also written to WORK/times.tsv, and to $OUT when set).
#
#   bash benchmarks/fresh_clone.sh            # in a temp folder, removed at the end
#   KEEP=1 bash benchmarks/fresh_clone.sh     # keep it (the path is printed)
#   ONLY_FIRST=1 bash benchmarks/fresh_clone.sh   # the first command only
#
# Commands are read from README.md itself (its ```bash blocks), so what runs is
# what a reader copies. kernelmill's own cache goes to WORK/cache (no verdict of
# an earlier run is reused); pip's download cache is the machine's.
# Needs: git, python3.11 (or $PYTHON), network access to the package index.
set -uo pipefail

REPO="$(cd "$(dirname "$0")/.." && pwd)"
PYTHON="${PYTHON:-python3.11}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/km-fresh-XXXXXX")"
export KERNELMILL_CACHE="$WORK/cache"
TIMES="$WORK/times.tsv"
printf 'step\tseconds\texit\tcommand\n' > "$TIMES"
SERVER_PID=""

cleanup() {
    [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null
    if [ -z "${KEEP:-}" ]; then rm -rf "$WORK"; else echo "kept: $WORK"; fi
}
trap cleanup EXIT

# step NAME COMMAND: run COMMAND in the clone with bash, log to WORK/NAME.log, time it
step() {
    local name="$1" cmd="$2" t0 t1 rc
    echo "== $name: $cmd"
    t0=$(date +%s.%N)
    (cd "$WORK/kernelmill" && bash -c "$cmd") > "$WORK/$name.log" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    printf '%s\t%s\t%s\t%s\n' "$name" "$(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }")" "$rc" "$cmd" >> "$TIMES"
    tail -n 4 "$WORK/$name.log" | sed 's/^/   | /'
    [ "$rc" -eq 0 ] || echo "   !! exit $rc (log: $WORK/$name.log)"
    return "$rc"
}

# the commands of the README's N-th ```bash block (from 1), comments cut
readme_block() {
    "$PYTHON" - "$WORK/kernelmill/README.md" "$1" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
blocks = re.findall(r"```bash\n(.*?)```", text, re.S)
for line in blocks[int(sys.argv[2]) - 1].splitlines():
    line = re.sub(r"\s+#\s.*$", "", line).rstrip()
    if line and not line.lstrip().startswith("#"):
        print(line)
PY
}

table() {
    echo
    echo "README in a fresh clone ($(git -C "$WORK/kernelmill" rev-parse --short HEAD)), $(nproc) cores, $("$PYTHON" --version 2>&1)"
    column -t -s $'\t' "$TIMES"
    [ -n "${OUT:-}" ] && cp "$TIMES" "$OUT/fresh_clone_times.tsv"
}

git clone -q "$REPO" "$WORK/kernelmill" || exit 1
"$PYTHON" -m venv "$WORK/venv" || exit 1
# shellcheck disable=SC1091
source "$WORK/venv/bin/activate"
echo "clone: $WORK/kernelmill at $(git -C "$WORK/kernelmill" rev-parse --short HEAD); venv: $(command -v python)"

# 1. the README's first command, exactly as written (install + the main job on built-in defaults)
step first_command "$(readme_block 1 | head -n 1)"
if [ -n "${ONLY_FIRST:-}" ]; then table; exit 0; fi

# 2. "The job": the lines that run as written (no TASKS/SAMPLES.jsonl/... placeholder)
n=0
while IFS= read -r cmd; do
    if echo "$cmd" | grep -qE '\b[A-Z][A-Z0-9_]*\b|\[|^\s|\\$'; then continue; fi  # placeholders, [options], continuations
    n=$((n + 1))
    step "job_$n" "$cmd"
done < <(readme_block 2)

# 3. the dry run, as written; the server line ends with '&': it is started here and stopped at the end
n=0
while IFS= read -r cmd; do
    n=$((n + 1))
    if [[ "$cmd" == *"&" ]]; then
        echo "== dry_$n (background): $cmd"
        (cd "$WORK/kernelmill" && bash -c "exec ${cmd%&}") > "$WORK/dry_$n.log" 2>&1 &
        SERVER_PID=$!
        continue
    fi
    step "dry_$n" "$cmd"
done < <(readme_block 3)

# 4. the job's placeholder commands on the dry run's files
first_id=$(cd "$WORK/kernelmill" && python -c "import json; print(json.loads(open('samples.jsonl').readline())['sample_id'])" 2>/dev/null)
step filled_metrics "kernelmill metrics verdicts.jsonl --k 1,2 --p 0,0.5,1"
step filled_report "kernelmill report verdicts.jsonl --samples samples.jsonl --tasks builtin -o report.html"
step filled_show "kernelmill show '$first_id' --samples samples.jsonl --verdicts verdicts.jsonl --tasks builtin"
table

#!/bin/bash
# Session 13 device calls (nvidia-h200, one GPU): GPU test files in concurrent lanes, one
# pytest process per file and lane (a failed-launch test leaves a sticky CUDA error in its
# process). LANES is a ';'-separated list of "KM_GPU_PART|file file ..." (empty part: whole
# file); each lane runs its files in order, all lanes at once, `-s` so a cut run still shows
# every verdict as it lands.
export PYTHONUNBUFFERED=1 XDG_CACHE_HOME=/tmp/xdg
T0=$(date +%s); END=$((T0 + ${CALL_S:-570})); TAG=${TAG:-c1}
mkdir -p /tmp/logs /tmp/site
[ -d /tmp/site/tree_sitter ] || pip install -q --no-deps --target /tmp/site .whl/ts/*.whl > /tmp/logs/pip.log 2>&1
export PYTHONPATH=$PWD/src:$PWD/tests:/tmp/site
{ nvidia-smi -L; nproc; date; git log --oneline -1 2>/dev/null; python3 -c "import torch, triton; print(torch.__version__, triton.__version__)"; } > /tmp/logs/env_$TAG.txt 2>&1
lane() {  # $1 lane number, $2 KM_GPU_PART, rest: files
  local i=$1 part=$2; shift 2
  for f in "$@"; do
    left=$((END - $(date +%s) - 15)); [ $left -lt 20 ] && { echo "lane $i $f not run: time" >> /tmp/logs/env_$TAG.txt; continue; }
    t=$(date +%s); log=/tmp/logs/$(basename $f .py)_${TAG}_l$i.log
    KM_GPU_PART=$part timeout -k 5 $left python3 -m pytest -m gpu -q -s -rA -p no:cacheprovider --durations=0 "$f" > $log 2>&1
    echo "lane $i [$part] $f rc $? $(( $(date +%s) - t )) s: $(tail -1 $log)" >> /tmp/logs/env_$TAG.txt
  done
}
i=0; IFS=';' read -ra LS <<< "$LANES"
for l in "${LS[@]}"; do i=$((i+1)); part=${l%%|*}; files=${l#*|}; lane $i "$part" $files & done
wait
echo "end +$(( $(date +%s) - T0 )) s" >> /tmp/logs/env_$TAG.txt
tar czf $OUT/$TAG.tgz -C /tmp logs
cat /tmp/logs/env_$TAG.txt

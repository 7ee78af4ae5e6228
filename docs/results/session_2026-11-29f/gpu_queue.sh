#!/bin/bash
# Session 14 device calls (nvidia-h200-x2): the `-m gpu` test files as one work queue served by
# one worker per GPU (CUDA_VISIBLE_DEVICES=g: kernelmill's timing lock is per GPU, so the two
# workers never wait for each other; two workers on one GPU would, session 13).
# QUEUE: ';'-separated items "EST|VAR=VAL ...|file file ...", longest first; a worker takes the
# first item whose estimate (seconds) fits the time left, so nothing is started that the call's
# end would cut. One pytest process per item, `-s`, so a cut run still shows its verdicts.
export PYTHONUNBUFFERED=1 XDG_CACHE_HOME=/tmp/xdg
T0=$(date +%s); END=$((T0 + ${CALL_S:-520})); TAG=${TAG:-c1}
mkdir -p /tmp/logs /tmp/site /tmp/q
[ -d /tmp/site/tree_sitter ] || pip install -q --no-deps --target /tmp/site .whl/ts/*.whl > /tmp/logs/pip.log 2>&1
ENVF=/tmp/logs/env_$TAG.txt
{ nvidia-smi -L; nproc; date; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.cuda.device_count())"; } > $ENVF 2>&1
NG=${GPUS:-$(nvidia-smi -L | wc -l)}
# the queue lives on in /tmp/q/pending between calls on one warm machine: QUEUE empty continues
# it; QUEUE_FRONT puts items before what is pending; an item a call's end cut goes back in
Q=/tmp/q/pending; [ -n "$QUEUE" ] && : > $Q; touch $Q
add() { IFS=';' read -ra ITEMS <<< "$1"; for it in "${ITEMS[@]}"; do [ -n "$it" ] && echo "$it"; done; }
{ add "$QUEUE_FRONT"; cat $Q; add "$QUEUE"; } > $Q.tmp; mv $Q.tmp $Q
take() {  # print and remove the first item that fits $1 seconds (under the queue's lock)
  ( flock 9; while IFS= read -r line; do est=${line%%|*}
      if [ -z "$got" ] && [ "$est" -le "$1" ]; then got=1; echo "$line" >&8; else echo "$line"; fi
    done < $Q > $Q.new; mv $Q.new $Q ) 9> $Q.lock 8>&1
}
worker() {
  local g=$1 n=0
  while :; do
    left=$((END - $(date +%s) - 15)); item=$(take $left); [ -z "$item" ] && break
    n=$((n+1)); rest=${item#*|}; vars=${rest%%|*}; files=${rest#*|}
    log=/tmp/logs/${TAG}_g${g}_$n.log; t=$(date +%s)
    ( export CUDA_VISIBLE_DEVICES=$g PYTHONPATH=$PWD/src:$PWD/tests:/tmp/site $vars
      [ -n "$PYX" ] && export PYTHONPATH=$PYTHONPATH:$PYX
      echo "# $item" > $log
      timeout -k 5 $left python3 -m pytest -m gpu -q -s -rA -p no:cacheprovider --basetemp /tmp/pt_${TAG}_g${g}_$n --durations=0 $files >> $log 2>&1 )
    rc=$?; echo "gpu $g [$vars] $files rc $rc $(( $(date +%s) - t )) s: $(tail -1 $log)" >> $ENVF
    [ $rc -eq 124 ] && ( flock 9; echo "$item" >> $Q ) 9> $Q.lock  # cut by the call's end: again next call
  done
}
for g in $(seq 0 $((NG - 1))); do worker $g & sleep 2; done
wait
echo "pending for the next call: $(tr '\n' ';' < $Q)" >> $ENVF
echo "end +$(( $(date +%s) - T0 )) s" >> $ENVF
tar czf $OUT/$TAG.tgz -C /tmp logs
cat $ENVF

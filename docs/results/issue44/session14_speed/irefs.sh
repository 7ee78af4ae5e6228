#!/bin/bash
# Instructions executed (valgrind cachegrind, no cache simulation: a count that the machine's load
# does not change) by small_once.py, the reroll of the 25 small files, for each tree given:
#   bash docs/results/issue44/session14_speed/irefs.sh /tmp/km_s14pre /tmp/km_s14base .
# BIG=1: big_once.py, the 2.383 MB unit, instead
# The real interpreter, not pyenv's shim (a shell script), so that valgrind counts python itself.
PY=${PY:-$(python -c "import sys; print(sys.executable)")}
HERE=$(cd "$(dirname "$0")" && pwd)
for t in "$@"; do
  r=$(PYTHONHASHSEED=0 PYTHONPATH=$t/src valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
      "$PY" "$HERE/$([ -n "$BIG" ] && echo big_once.py || echo small_once.py)" 2>&1 | grep "I *refs" | sed 's/.*refs: *//')
  echo "$t $r"
done

#!/bin/bash
# Instructions executed (valgrind cachegrind, no cache simulation) by the CLI figure's command,
# `kernelmill ptx stats FILES --jobs 2` on the 25 small files, summed over the command's process
# and its two forked workers, for each tree given (load-independent; the wall figure is not):
#   bash docs/results/issue44/session14_speed/irefs_cli.sh /tmp/km_s14base .
PY=${PY:-$(python -c "import sys; print(sys.executable)")}
FILES=$(python -c "
import sys; sys.path.insert(0, 'benchmarks')
import ptx_reroll_speed; from pathlib import Path
print(' '.join(map(str, ptx_reroll_speed.build(Path('/tmp/kernelmill-ptx-reroll-speed'), big=False))))")
for t in "$@"; do
  r=$(PYTHONHASHSEED=0 COLUMNS=200 PYTHONPATH=$t/src valgrind --tool=cachegrind --cache-sim=no \
      --cachegrind-out-file=/dev/null "$PY" -m kernelmill ptx stats $FILES --jobs 2 2>&1 >/dev/null \
      | grep "I *refs" | sed 's/.*refs: *//; s/,//g' | paste -sd+ | bc)
  echo "$t $r"
done

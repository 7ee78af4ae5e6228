#!/bin/bash
# Alternated before/after runs of the CLI figure: `ptx_reroll_speed.py --jobs 2 --no-inprocess`,
# "before" from a worktree of the base commit (PYTHONPATH=<tree>/src), "after" from this tree.
#   git worktree add --detach /tmp/km_base 962117863aeb8f83e240ba1c24786e9761978fb2
#   bash docs/results/issue44/session11_speed/ab.sh /tmp/km_base . 3 > out.txt
BEFORE=$1; AFTER=$2; N=${3:-3}
for i in $(seq "$N"); do
  for side in before after; do
    tree=$BEFORE; [ "$side" = after ] && tree=$AFTER
    echo "== $side ($tree) $(uptime | sed 's/.*load/load/')"
    PYTHONPATH=$tree/src python "$AFTER/benchmarks/ptx_reroll_speed.py" --jobs 2 --no-inprocess --repeat 1 \
      | grep -E "CLI|rerolled|load average"
  done
done

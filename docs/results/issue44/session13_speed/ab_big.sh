#!/bin/bash
# Alternated before/after runs of the CLI figure with the 2.4 MB unit:
# `ptx_reroll_speed.py --jobs 2 --no-inprocess --repeat 1 --big`, "before" from a worktree of
# the session's starting commit (PYTHONPATH=<tree>/src), "after" from this tree.
#   git worktree add --detach /tmp/km_base 1a0722ff29b243763765c86ccf14b675e9b5f089
#   bash docs/results/issue44/session13_speed/ab_big.sh /tmp/km_base . 3 > out.txt
BEFORE=$1; AFTER=$2; N=${3:-3}
for i in $(seq "$N"); do
  for side in before after; do
    tree=$BEFORE; [ "$side" = after ] && tree=$AFTER
    echo "== $side ($tree) $(uptime | sed 's/.*load/load/')"
    PYTHONPATH=$tree/src python "$AFTER/benchmarks/ptx_reroll_speed.py" --jobs 2 --no-inprocess --repeat 1 --big \
      | grep -E "CLI|rerolled|load average"
  done
done

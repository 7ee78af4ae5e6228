#!/usr/bin/env bash
# GPU fidelity with the guards on and off over the same candidates, one
# independent measurement shared by both (timing_fidelity.py --resume reuses it).
# usage: bash benchmarks/diag/guards_on_off.sh OUTDIR ROUNDS NAME,NAME,...
set -euo pipefail
out=$1 rounds=$2 only=$3
mkdir -p "$out"
python benchmarks/timing_fidelity.py --device cuda --only "$only" --rounds "$rounds" --out "$out/on.json" \
    --markdown "$out/on.md" | tail -30
python - "$out" <<'PY'
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
d = json.loads((out / "on.json").read_text())
d.pop("rows", None); d.pop("summary", None)
(out / "off.json").write_text(json.dumps(d))
PY
python benchmarks/timing_fidelity.py --device cuda --only "$only" --rounds "$rounds" --out "$out/off.json" \
    --markdown "$out/off.md" --resume --kernelmill-arg=--guards --kernelmill-arg=off | tail -30
